// The NPY series reader (kiln render --source x.npy), as a close series and as OHLC rows.
#include "fuzz_input.h"
#include "kiln/apps/render.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kiln::fuzz::input_file(data, size, ".npy");
  (void)kiln::series_load_npy(path, false);
  (void)kiln::series_load_npy(path, true);
  return 0;
}
