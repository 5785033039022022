// The mask op's common case on the CPU, included once per ISA variant: mask_cpu.cpp (generic, baseline ISA) and
// mask_avx2.cpp (-mavx2; explicit AVX2). Class ids of an f32 CHW image, a row at a time: with AVX2 32 pixels at a
// time through every channel in registers, else (and for the row's last pixels) the channels outermost. The result is kiln_mask_decide's, bit for
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

#include "kiln/ops/mask.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace kiln {
namespace KILN_MASK_VARIANT {

#if defined(__AVX2__)
// One class's values `v` against the best so far: taken where greater, or where the best is NaN and v is not.
inline void argmax_take(const float* v, __m256i class_id, __m256& best, __m256i& id) {
  const __m256 a = _mm256_loadu_ps(v);
  const __m256 take = _mm256_or_ps(_mm256_cmp_ps(a, best, _CMP_GT_OQ),
                                   _mm256_and_ps(_mm256_cmp_ps(best, best, _CMP_UNORD_Q), _mm256_cmp_ps(a, a, _CMP_ORD_Q)));
  best = _mm256_blendv_ps(best, a, take);
  id = _mm256_blendv_epi8(id, class_id, _mm256_castps_si256(take));
}

// 32 pixels at a time, their best values and ids in registers through every class (each plane read once, nothing
// else loaded or stored); returns the pixels done.
int32_t mask_argmax_blocks(const float* const* planes, int32_t channels, int32_t w, uint8_t* out) {
  int32_t x = 0;
  for (; x + 32 <= w; x += 32) {
    __m256 b0 = _mm256_loadu_ps(planes[0] + x);
    __m256 b1 = _mm256_loadu_ps(planes[0] + x + 8);
    __m256 b2 = _mm256_loadu_ps(planes[0] + x + 16);
    __m256 b3 = _mm256_loadu_ps(planes[0] + x + 24);
    __m256i i0 = _mm256_setzero_si256();
    __m256i i1 = i0;
    __m256i i2 = i0;
    __m256i i3 = i0;
    for (int32_t c = 1; c < channels; ++c) {
      const float* v = planes[c] + x;
      const __m256i cv = _mm256_set1_epi32(c);
      argmax_take(v, cv, b0, i0);
      argmax_take(v + 8, cv, b1, i1);
      argmax_take(v + 16, cv, b2, i2);
      argmax_take(v + 24, cv, b3, i3);
    }
    // ids < 256: packed to u16 then u8 within lanes, then the dwords put back in pixel order
    const __m256i bytes = _mm256_packus_epi16(_mm256_packus_epi32(i0, i1), _mm256_packus_epi32(i2, i3));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + x),
                        _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  }
  return x;
}
#endif

void mask_argmax_row(const uint8_t* base, const KilnImageDesc& d, int32_t y, uint8_t* out, float* best, int32_t* id) {
  const auto plane = [&](int32_t c) {
    return reinterpret_cast<const float*>(base + d.offset + static_cast<int64_t>(c) * d.plane_stride +
                                          static_cast<int64_t>(y) * d.row_stride);
  };
  int32_t x0 = 0;
#if defined(__AVX2__)
  const float* planes[kMaskMaxChannels];  // the op refuses more channels
  for (int32_t c = 0; c < d.channels; ++c) planes[c] = plane(c);
  x0 = mask_argmax_blocks(planes, d.channels, d.width, out);
#endif
  // The rest of the row (all of it without AVX2): the best so far in `best` and `id`, class after class.
  const int32_t w = d.width - x0;
  if (w == 0) return;
  std::memcpy(best, plane(0) + x0, static_cast<size_t>(w) * sizeof(float));
  std::memset(id, 0, static_cast<size_t>(w) * sizeof(int32_t));
  for (int32_t c = 1; c < d.channels; ++c) {
    const float* v = plane(c) + x0;
    for (int32_t x = 0; x < w; ++x) {
      const float a = v[x];
      const float b = best[x];
      const bool take = a > b || (b != b && a == a);
      best[x] = take ? a : b;
      id[x] = take ? c : id[x];
    }
  }
  for (int32_t x = 0; x < w; ++x) out[x0 + x] = static_cast<uint8_t>(id[x]);
}

}  // namespace KILN_MASK_VARIANT
}  // namespace kiln
#endif  // KILN_MASK_VARIANT
