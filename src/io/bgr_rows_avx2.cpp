#include <immintrin.h>

#include "io/bgr_rows.h"

namespace kiln {

namespace {

// 16 pixels are 48 bytes, three 16-byte vectors a, b, c; output byte j takes input byte j + 2, j or j - 2 (j % 3 =
// 0, 1, 2), so each output vector is an OR of pshufb's of the input vectors it draws from (a byte index of -128
// gives 0). An AVX2 step does two such blocks, one per 128-bit lane (pshufb works within a lane), 32 pixels: all its
// loads come before its stores, and it reads and writes only its own 96 bytes.
struct BgrShuffles {
  alignas(16) int8_t index[3][3][16];  // [output vector][input vector][byte]
};

constexpr BgrShuffles bgr_shuffles() {
  BgrShuffles s{};
  for (int out = 0; out < 3; ++out) {
    for (int in = 0; in < 3; ++in) {
      for (int j = 0; j < 16; ++j) {
        const int byte = 16 * out + j;
        const int from = byte + (byte % 3 == 0 ? 2 : byte % 3 == 1 ? 0 : -2);
        s.index[out][in][j] = static_cast<int8_t>(from / 16 == in ? from % 16 : -128);
      }
    }
  }
  return s;
}

constexpr BgrShuffles kBgrShuffles = bgr_shuffles();

__m256i both_lanes(const int8_t* index) {
  return _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(index)));
}

// Block `lo` in the low lane, the one 48 bytes on in the high lane.
__m256i load_blocks(const uint8_t* lo) {
  return _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(lo + 48), reinterpret_cast<const __m128i*>(lo));
}

int64_t bgr_to_rgb_steps(const uint8_t* in, int64_t count, uint8_t* out) {
  const auto& m = kBgrShuffles.index;
  const __m256i m00 = both_lanes(m[0][0]), m01 = both_lanes(m[0][1]);
  const __m256i m10 = both_lanes(m[1][0]), m11 = both_lanes(m[1][1]), m12 = both_lanes(m[1][2]);
  const __m256i m21 = both_lanes(m[2][1]), m22 = both_lanes(m[2][2]);
  int64_t x = 0;
  for (; x + 32 <= count; x += 32) {
    const uint8_t* from = in + 3 * x;
    const __m256i a = load_blocks(from);
    const __m256i b = load_blocks(from + 16);
    const __m256i c = load_blocks(from + 32);
    const __m256i o0 = _mm256_or_si256(_mm256_shuffle_epi8(a, m00), _mm256_shuffle_epi8(b, m01));
    const __m256i o1 = _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(a, m10), _mm256_shuffle_epi8(b, m11)),
                                       _mm256_shuffle_epi8(c, m12));
    const __m256i o2 = _mm256_or_si256(_mm256_shuffle_epi8(b, m21), _mm256_shuffle_epi8(c, m22));
    uint8_t* to = out + 3 * x;
    _mm256_storeu2_m128i(reinterpret_cast<__m128i*>(to + 48), reinterpret_cast<__m128i*>(to), o0);
    _mm256_storeu2_m128i(reinterpret_cast<__m128i*>(to + 64), reinterpret_cast<__m128i*>(to + 16), o1);
    _mm256_storeu2_m128i(reinterpret_cast<__m128i*>(to + 80), reinterpret_cast<__m128i*>(to + 32), o2);
  }
  if (x + 16 <= count) {  // one block more, in 128-bit vectors
    const uint8_t* from = in + 3 * x;
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 32));
    const auto mask = [&](int o, int i) { return _mm_load_si128(reinterpret_cast<const __m128i*>(m[o][i])); };
    uint8_t* to = out + 3 * x;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to),
                     _mm_or_si128(_mm_shuffle_epi8(a, mask(0, 0)), _mm_shuffle_epi8(b, mask(0, 1))));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + 16),
                     _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, mask(1, 0)), _mm_shuffle_epi8(b, mask(1, 1))),
                                  _mm_shuffle_epi8(c, mask(1, 2))));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + 32),
                     _mm_or_si128(_mm_shuffle_epi8(b, mask(2, 1)), _mm_shuffle_epi8(c, mask(2, 2))));
    x += 16;
  }
  return x;
}

// 8 pixels a step: one pshufb per lane drops X and swaps, a permute packs the lanes' 12 bytes together; 32 bytes are
// stored, of which the last 8 are written again by the next step (or the tail loop).
int64_t bgrx_to_rgb_steps(const uint8_t* in, int64_t count, uint8_t* out) {
  const __m256i pack = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
  const __m256i swap = _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1,  //
                                        2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
  int64_t x = 0;
  for (; (x + 8) * 3 + 8 <= count * 3; x += 8) {
    const __m256i bgrx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 4 * x));
    const __m256i rgb = _mm256_shuffle_epi8(bgrx, swap);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 3 * x), _mm256_permutevar8x32_epi32(rgb, pack));
  }
  return x;
}

}  // namespace

void bgr_row_to_rgb_avx2(const uint8_t* in, int32_t in_channels, int64_t count, uint8_t* out) {
  const int64_t done = in_channels == 3 ? bgr_to_rgb_steps(in, count, out) : bgrx_to_rgb_steps(in, count, out);
  bgr_row_to_rgb_loop(in + in_channels * done, in_channels, count - done, out + 3 * done);
}

}  // namespace kiln
