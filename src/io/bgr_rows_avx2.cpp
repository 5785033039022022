#include "io/bgr_rows.h"

namespace kiln {

void bgr_row_to_rgb_avx2(const uint8_t* in, int32_t in_channels, int64_t count, uint8_t* out) {
  bgr_row_to_rgb_loop(in, in_channels, count, out);
}

}  // namespace kiln
