// Image decoding (kiln quality, preprocess, infer, faces): JPEG and PNG from memory, at full size, as gray, and with
// JPEG DCT scaling; limited to 4 Mpx so that the fuzzer explores the parsers rather than big allocations.
#include <cstddef>
#include <cstdint>

#include "kiln/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::DecodeOptions options;
  options.max_pixels = int64_t{4} << 20;
  (void)kiln::image_decode(data, size, options);
  options.channels = 1;
  (void)kiln::image_decode(data, size, options);
  options.channels = 3;
  options.min_width = 16;
  options.min_height = 16;
  (void)kiln::image_decode(data, size, options);
  return 0;
}
