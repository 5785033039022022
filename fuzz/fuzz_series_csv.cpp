// The CSV series reader (kiln render --source x.csv): close column by name, and OHLC.
#include "fuzz_input.h"
#include "kiln/apps/render.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kiln::fuzz::input_file(data, size, ".csv");
  (void)kiln::series_load_csv(path, "close", false);
  (void)kiln::series_load_csv(path, "", true);
  return 0;
}
