#include "io/bgr_rows.h"

#include "core/cpu_isa.h"

namespace kiln {

bool bgr_rows_vbmi_supported() {
#if defined(__x86_64__)
  static const bool supported = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("avx512vbmi");
  return supported;
#else
  return false;
#endif
}

BgrRowToRgb bgr_row_to_rgb_chosen() {
  if (cpu_isa_active() < CpuIsa::kAvx2) return bgr_row_to_rgb_loop;
  return bgr_rows_vbmi_supported() ? bgr_row_to_rgb_vbmi : bgr_row_to_rgb_avx2;
}

void bgr_row_to_rgb(const uint8_t* in, int32_t in_channels, int64_t count, uint8_t* out) {
  bgr_row_to_rgb_chosen()(in, in_channels, count, out);
}

}  // namespace kiln
