// Scalar pieces of the CPU warp loops (warp_cpu.cpp and each ISA variant of warp_loops.h). Included inside an
// anonymous namespace on purpose: every translation unit keeps its own copy, built for its own ISA (one inline
// function shared by TUs built with and without -mavx2 could be linked from the AVX2 one).
#ifndef KILN_OPS_CPU_WARP_SCALAR_MATH_H
#define KILN_OPS_CPU_WARP_SCALAR_MATH_H
#include <cmath>
#include <cstdint>

namespace kiln {
namespace {

// kiln_floorf(v) and its int32 value for v in [-2^30, 2^30] (kiln_warp_coord_clamp's range), without a libm
// call: the truncation is exact there, and a zero result keeps the sign of v like floorf (floorf(-0) = -0).
inline float floor_clamped(float v, int32_t* as_int) {
  int32_t t = static_cast<int32_t>(v);
  float tf = static_cast<float>(t);
  if (tf > v) {  // negative non-integer: |v| < 2^23, so tf - 1 is exact
    tf -= 1.0f;
    t -= 1;
  }
  *as_int = t;
  return v == 0.0f ? v : tf;
}

// kiln_u8_round_even(v): for 0 < v < 255, v - floor(v) is exact and the rule is round half to even, which is
// what lrintf does in the default rounding mode (one cvtss2si on x86-64).
inline uint8_t u8_round_even(float v) {
  if (!(v > 0.0f)) return 0;
  if (v >= 255.0f) return 255;
  return static_cast<uint8_t>(std::lrintf(v));
}

}  // namespace
}  // namespace kiln
#endif  // KILN_OPS_CPU_WARP_SCALAR_MATH_H
