// BMP (stb_image, behind kiln's completeness check) on any bytes,
// then the orientation and the colour profile it returns.
#include <cstddef>
#include <cstdint>

#include "fuzz_decoded.h"
#include "io/web_codecs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::decoded_finish(kiln::bmp_decode(data, size, kiln::fuzz::kDecoderMaxPixels));
  return 0;
}
