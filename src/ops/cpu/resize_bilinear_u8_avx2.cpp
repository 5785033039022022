// The AVX2 loops of the fast two-tap u8 resize (resize_bilinear_u8.h): every pixel, the row's last block too, goes
// through the same SIMD expressions.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ops/cpu/resize_bilinear_u8.h"

namespace kiln::avx2 {

namespace {

constexpr float kInvWeightScale = 1.0f / 2048.0f;

// The 4 registers of block b: v_j = h0 * b0 + h1 * b1 (pixels j | j + 4, 4 channels each).
inline void vertical_block(const float* h0, const float* h1, __m256 w0, __m256 w1, int32_t b, __m256 v[4]) {
  const float* p0 = h0 + static_cast<int64_t>(b) * 32;
  const float* p1 = h1 + static_cast<int64_t>(b) * 32;
  for (int32_t j = 0; j < 4; ++j) {
    v[j] =
        _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(p0 + 8 * j), w0), _mm256_mul_ps(_mm256_loadu_ps(p1 + 8 * j), w1));
  }
}

// Pixels of block b inside the row (8, or fewer in the last block).
inline int32_t block_pixels(const BilinearU8Tables& t, int32_t b) { return std::min(8, t.width - 8 * b); }

// Blocks [b0, b1) of a horizontal row, the first taps' offsets relative to base.
inline void horizontal_blocks(const uint8_t* base, const BilinearU8Tables& t, int32_t b0, int32_t b1, float* out) {
  // 16 bytes from the first tap hold both taps. Per 128-bit half, one pixel's (tap 0, tap 1) u8 pairs of
  // channels 0-3 -> 16-bit pairs for pmaddwd.
  const int8_t c = static_cast<int8_t>(t.channels);
  const __m256i pairs = _mm256_setr_epi8(0, -1, c, -1, 1, -1, c + 1, -1, 2, -1, c + 2, -1, 3, -1, c + 3, -1,  //
                                         0, -1, c, -1, 1, -1, c + 1, -1, 2, -1, c + 2, -1, 3, -1, c + 3, -1);
  const int32_t* offset = t.offset.data();
  for (int32_t b = b0; b < b1; ++b) {
    const int32_t x = 8 * b;
    const auto* w = reinterpret_cast<const __m256i*>(t.block_weights.data() + static_cast<int64_t>(b) * 64);
    float* o = out + static_cast<int64_t>(b) * 32;
    for (int32_t j = 0; j < 4; ++j) {
      const __m256i taps = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(base + offset[x + j + 4]),
                                               reinterpret_cast<const __m128i*>(base + offset[x + j]));
      const __m256i sums = _mm256_madd_epi16(_mm256_shuffle_epi8(taps, pairs), _mm256_loadu_si256(w + j));
      _mm256_storeu_ps(o + 8 * j, _mm256_cvtepi32_ps(sums));
    }
  }
}

}  // namespace

void bilinear_u8_hrow(const uint8_t* src_row, const BilinearU8Tables& t, uint8_t* tail, float* out) {
  horizontal_blocks(src_row, t, 0, t.direct_blocks, out);
  if (t.direct_blocks == t.blocks) return;
  std::memcpy(tail, src_row + t.tail_base, static_cast<size_t>(t.row_bytes - t.tail_base));
  horizontal_blocks(tail, t, t.direct_blocks, t.blocks, out);
}

void bilinear_u8_vrow(const float* h0, const float* h1, float b0, float b1, const BilinearU8Tables& t, uint8_t* out) {
  const __m256 w0 = _mm256_set1_ps(b0 * kInvWeightScale);
  const __m256 w1 = _mm256_set1_ps(b1 * kInvWeightScale);
  // Per 128-bit half: 4 pixels of 4 bytes -> 4 pixels of 3 bytes.
  const __m256i drop_fourth = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,  //
                                               0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
  const int32_t cn = t.channels;
  for (int32_t b = 0; b < t.blocks; ++b) {
    __m256 v[4];
    vertical_block(h0, h1, w0, w1, b, v);
    // cvtps_epi32 rounds half to even like kiln_u8_round_even; packs/packus saturate.
    const __m256i p01 = _mm256_packs_epi32(_mm256_cvtps_epi32(v[0]), _mm256_cvtps_epi32(v[1]));  // 0,1 | 4,5
    const __m256i p23 = _mm256_packs_epi32(_mm256_cvtps_epi32(v[2]), _mm256_cvtps_epi32(v[3]));  // 2,3 | 6,7
    __m256i px = _mm256_packus_epi16(p01, p23);                                                   // 0-3 | 4-7
    if (cn == 3) px = _mm256_shuffle_epi8(px, drop_fourth);
    uint8_t* o = out + static_cast<int64_t>(b) * 8 * cn;
    const int32_t n = block_pixels(t, b);
    if (n == 8 && cn == 4) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), px);
    } else if (n == 8) {
      for (int32_t half = 0; half < 2; ++half) {
        const __m128i h = half == 0 ? _mm256_castsi256_si128(px) : _mm256_extracti128_si256(px, 1);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(o + 12 * half), h);
        _mm_storeu_si32(o + 12 * half + 8, _mm_srli_si128(h, 8));
      }
    } else {
      alignas(32) uint8_t block[32];
      _mm256_store_si256(reinterpret_cast<__m256i*>(block), px);
      std::memcpy(o, block, static_cast<size_t>(std::min(n, 4) * cn));
      if (n > 4) std::memcpy(o + 4 * cn, block + 16, static_cast<size_t>((n - 4) * cn));
    }
  }
}

void bilinear_u8_vrow_planes(const float* h0, const float* h1, float b0, float b1, const BilinearU8Tables& t,
                             const BilinearPlanes& p) {
  const __m256 w0 = _mm256_set1_ps(b0 * kInvWeightScale);
  const __m256 w1 = _mm256_set1_ps(b1 * kInvWeightScale);
  const __m256 lo = _mm256_setzero_ps();
  const __m256 hi = _mm256_set1_ps(255.0f);
  for (int32_t b = 0; b < t.blocks; ++b) {
    __m256 v[4];
    vertical_block(h0, h1, w0, w1, b, v);
    // Transpose each half's 4 pixels x 4 channels into one register per channel, pixels 0-3 | 4-7.
    const __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]);
    const __m256 t1 = _mm256_unpacklo_ps(v[2], v[3]);
    const __m256 t2 = _mm256_unpackhi_ps(v[0], v[1]);
    const __m256 t3 = _mm256_unpackhi_ps(v[2], v[3]);
    const __m256 ch[4] = {_mm256_shuffle_ps(t0, t1, 0x44), _mm256_shuffle_ps(t0, t1, 0xEE),
                          _mm256_shuffle_ps(t2, t3, 0x44), _mm256_shuffle_ps(t2, t3, 0xEE)};
    const int32_t n = block_pixels(t, b);
    for (int32_t c = 0; c < t.channels; ++c) {
      const __m256 clamped = _mm256_min_ps(_mm256_max_ps(ch[c], lo), hi);
      const __m256 r = _mm256_add_ps(_mm256_mul_ps(clamped, _mm256_set1_ps(p.mul[c])), _mm256_set1_ps(p.add[c]));
      float* o = p.planes[c] + 8 * b;
      if (n == 8) {
        _mm256_storeu_ps(o, r);
      } else {
        alignas(32) float block[8];
        _mm256_store_ps(block, r);
        std::memcpy(o, block, sizeof(float) * static_cast<size_t>(n));
      }
    }
  }
}

}  // namespace kiln::avx2
