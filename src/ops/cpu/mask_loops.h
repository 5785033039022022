// The mask op's common case on the CPU, included once per ISA variant: mask_cpu.cpp (generic, baseline ISA) and
// mask_avx2.cpp (-mavx2; explicit AVX2). Class ids of an f32 CHW image, a row at a time with the channels outermost,
// so that the comparisons run across the row's pixels in SIMD registers. The result is kiln_mask_decide's, bit for
// bit: a value replaces the best only when strictly larger, or when the best is NaN and it is not.
#ifndef KILN_OPS_CPU_MASK_LOOPS_DECL
#define KILN_OPS_CPU_MASK_LOOPS_DECL
#include <cstdint>

#include "ops/mask.h"

namespace kiln {

// Row y of the class-id image of `base` (f32 CHW, desc d, channels <= 256) into out; best and id: d.width scratch.
namespace generic {
void mask_argmax_row(const uint8_t* base, const KilnImageDesc& d, int32_t y, uint8_t* out, float* best, int32_t* id);
}  // namespace generic
namespace avx2 {
void mask_argmax_row(const uint8_t* base, const KilnImageDesc& d, int32_t y, uint8_t* out, float* best, int32_t* id);
}  // namespace avx2

}  // namespace kiln
#endif  // KILN_OPS_CPU_MASK_LOOPS_DECL

#ifdef KILN_MASK_VARIANT
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace kiln {
namespace KILN_MASK_VARIANT {

void mask_argmax_row(const uint8_t* base, const KilnImageDesc& d, int32_t y, uint8_t* out, float* best, int32_t* id) {
  const auto plane = [&](int32_t c) {
    return reinterpret_cast<const float*>(base + d.offset + static_cast<int64_t>(c) * d.plane_stride +
                                          static_cast<int64_t>(y) * d.row_stride);
  };
  const int32_t w = d.width;
  std::memcpy(best, plane(0), static_cast<size_t>(w) * sizeof(float));
  std::memset(id, 0, static_cast<size_t>(w) * sizeof(int32_t));
  for (int32_t c = 1; c < d.channels; ++c) {
    const float* v = plane(c);
    int32_t x = 0;
#if defined(__AVX2__)
    const __m256i cv = _mm256_set1_epi32(c);
    for (; x + 8 <= w; x += 8) {
      const __m256 a = _mm256_loadu_ps(v + x);
      const __m256 b = _mm256_loadu_ps(best + x);
      // v > best, or best is NaN and v is not
      const __m256 take = _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ),
                                       _mm256_and_ps(_mm256_cmp_ps(b, b, _CMP_UNORD_Q), _mm256_cmp_ps(a, a, _CMP_ORD_Q)));
      _mm256_storeu_ps(best + x, _mm256_blendv_ps(b, a, take));
      const __m256i old = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(id + x));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(id + x),
                          _mm256_blendv_epi8(old, cv, _mm256_castps_si256(take)));
    }
#endif
    for (; x < w; ++x) {
      const float a = v[x];
      const float b = best[x];
      const bool take = a > b || (b != b && a == a);
      best[x] = take ? a : b;
      id[x] = take ? c : id[x];
    }
  }
  for (int32_t x = 0; x < w; ++x) out[x] = static_cast<uint8_t>(id[x]);
}

}  // namespace KILN_MASK_VARIANT
}  // namespace kiln
#endif  // KILN_MASK_VARIANT
