// The CSV series reader (kiln render --source x.csv): close column by name, OHLC, and a long-format panel (a symbol
// column, each symbol laid out on the panel's calendar).
#include "fuzz_input.h"
#include "kiln/apps/render.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kiln::fuzz::input_file(data, size, ".csv");
  (void)kiln::series_load_csv(path, "close", false);
  (void)kiln::series_load_csv(path, "", true);
  (void)kiln::series_load(kiln::SeriesSource{.path = path, .ohlc = true, .symbol_column = "Symbol"});
  return 0;
}
