// BGR(X) rows to RGB: what BMP stores against what kiln gives. The SIMD steps (bgr_rows_avx2.cpp: byte shuffles, 32
// pixels a step for BGR; bgr_rows_vbmi.cpp: AVX-512 VBMI byte permutes, 64 pixels a step for BGR) are picked at run
// time (core/cpu_isa.h, and the CPU's AVX-512 VBMI); every path gives the plain loop's bytes.
#pragma once

#include <cstdint>

namespace kiln {

// `count` pixels of `in_channels` (3: BGR, 4: BGRX) bytes to RGB.
using BgrRowToRgb = void (*)(const uint8_t* in, int32_t in_channels, int64_t count, uint8_t* out);

// The fastest path this CPU runs under the active ISA (core/cpu_isa.h): choose once per image, call per row.
BgrRowToRgb bgr_row_to_rgb_chosen();
void bgr_row_to_rgb(const uint8_t* in, int32_t in_channels, int64_t count, uint8_t* out);
void bgr_row_to_rgb_avx2(const uint8_t* in, int32_t in_channels, int64_t count, uint8_t* out);
// Needs AVX-512 F, BW and VBMI (bgr_rows_vbmi_supported); BGRX rows and a BGR row's last count % 64 pixels go to
// the AVX2 steps.
void bgr_row_to_rgb_vbmi(const uint8_t* in, int32_t in_channels, int64_t count, uint8_t* out);
bool bgr_rows_vbmi_supported();

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
