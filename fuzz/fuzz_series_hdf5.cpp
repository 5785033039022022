// The HDF5 series reader (kiln render x.h5:/close), through the HDF5 library, and the panel table reader (a compound
// dataset /prices, a group of columns /columns; seeded by corpus/series_hdf5/panel_tables.h5).
#include "fuzz_input.h"
#include "io/hdf5_library.h"
#include "kiln/apps/render.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool once = (kiln::hdf5_exit_cleanup_disable(), true);
  (void)once;
  const std::string path = kiln::fuzz::input_file(data, size, ".h5");
  (void)kiln::series_load_hdf5(path, "close", false);
  (void)kiln::series_load_hdf5(path, "ohlc", true);
  for (const char* table : {":/prices", ":/columns"}) {
    kiln::SeriesSource source;
    source.path = path + table;
    (void)kiln::series_load(source);
  }
  return 0;
}
