// The @list file of every image command: one path per line, comments, blank lines, relative paths.
#include "fuzz_input.h"
#include "io/image_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kiln::fuzz::input_file(data, size, ".txt");
  (void)kiln::image_inputs_list(path);
  return 0;
}
