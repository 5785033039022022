// BGR(X) rows to RGB: what BMP stores against what kiln gives. The AVX2 steps (bgr_rows_avx2.cpp: byte shuffles, 32
// pixels a step for BGR) are picked at run time (core/cpu_isa.h); they give the plain loop's bytes.
#pragma once

#include <cstdint>

namespace kiln {

// `count` pixels of `in_channels` (3: BGR, 4: BGRX) bytes to RGB.
void bgr_row_to_rgb(const uint8_t* in, int32_t in_channels, int64_t count, uint8_t* out);
void bgr_row_to_rgb_avx2(const uint8_t* in, int32_t in_channels, int64_t count, uint8_t* out);

// The plain loop: the reference, and the AVX2 steps' tail.
inline void bgr_row_to_rgb_loop(const uint8_t* __restrict in, int32_t in_channels, int64_t count,
                                uint8_t* __restrict out) {
  if (in_channels == 3) {
    for (int64_t x = 0; x < count; ++x) {
      out[3 * x] = in[3 * x + 2];
      out[3 * x + 1] = in[3 * x + 1];
      out[3 * x + 2] = in[3 * x];
    }
  } else {
    for (int64_t x = 0; x < count; ++x) {
      out[3 * x] = in[4 * x + 2];
      out[3 * x + 1] = in[4 * x + 1];
      out[3 * x + 2] = in[4 * x];
    }
  }
}

}  // namespace kiln
