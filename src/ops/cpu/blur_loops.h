// The blur's two full-width loops (blur_cpu.cpp), included once per ISA variant: blur_cpu.cpp (generic, baseline
// ISA) and blur_avx2.cpp (-mavx2). Plain loops the compiler vectorizes for each; no FMA in either (no -mfma, and
// -ffp-contract=off), so every variant computes blur_px.h's operations in its order and gives the same bytes.
#ifndef KILN_OPS_CPU_BLUR_LOOPS_DECL
#define KILN_OPS_CPU_BLUR_LOOPS_DECL
#include <cstddef>
#include <cstdint>

namespace kiln {

// sums[k] += row[k] for k < n (the shrink's block rows summed column-wise).
// out[k] = (uint8)(top[k] + (bottom[k] - top[k]) * wy + 0.5f) for k < n (kiln_blur_enlarge_level's vertical step;
// the values lie in [0.5, 255.5]).
namespace generic {
void blur_columns_add(const uint8_t* row, int32_t* sums, size_t n);
void blur_rows_blend(const float* top, const float* bottom, float wy, uint8_t* out, size_t n);
}  // namespace generic
namespace avx2 {
void blur_columns_add(const uint8_t* row, int32_t* sums, size_t n);
void blur_rows_blend(const float* top, const float* bottom, float wy, uint8_t* out, size_t n);
}  // namespace avx2

}  // namespace kiln
#endif  // KILN_OPS_CPU_BLUR_LOOPS_DECL

#ifdef KILN_BLUR_VARIANT
namespace kiln::KILN_BLUR_VARIANT {

void blur_columns_add(const uint8_t* __restrict row, int32_t* __restrict sums, size_t n) {
  for (size_t k = 0; k < n; ++k) sums[k] += row[k];
}

// top and bottom may be the same row (both only read); out is never either.
void blur_rows_blend(const float* top, const float* bottom, float wy, uint8_t* __restrict out, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    out[k] = static_cast<uint8_t>(static_cast<int32_t>(top[k] + (bottom[k] - top[k]) * wy + 0.5f));
  }
}

}  // namespace kiln::KILN_BLUR_VARIANT
#endif  // KILN_BLUR_VARIANT
