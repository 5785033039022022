#include "io/bgr_rows.h"

#include "core/cpu_isa.h"

namespace kiln {

void bgr_row_to_rgb(const uint8_t* in, int32_t in_channels, int64_t count, uint8_t* out) {
  if (cpu_isa_active() >= CpuIsa::kAvx2) {
    bgr_row_to_rgb_avx2(in, in_channels, count, out);
  } else {
    bgr_row_to_rgb_loop(in, in_channels, count, out);
  }
}

}  // namespace kiln
