// BGR to RGB with AVX-512 VBMI byte permutes, 64 pixels (192 bytes) a step: each 64-byte output vector is one
// two-source vpermt2b of two loads that hold every input byte it draws from (output byte j takes input byte j + 2,
// j or j - 2, so a vector's 64 bytes draw from a window of at most 66). Three permutes and three full stores per
// step; the AVX2 steps do the rest of the row. Built for these instructions by a target attribute and called only
// where the CPU has them (bgr_rows.cpp).
#include <immintrin.h>

#include "io/bgr_rows.h"

namespace kiln {

namespace {

// Output vector k (bytes 64k..64k+63 of the step) permutes the 64 bytes at kLow[k] and the 64 at kHigh[k]; every
// load stays inside the step's 192 bytes.
constexpr int kLow[3] = {0, 62, 126};
constexpr int kHigh[3] = {64, 126, 128};

struct BgrPermutes {
  alignas(64) uint8_t index[3][64];
};

constexpr BgrPermutes bgr_permutes() {
  BgrPermutes p{};
  for (int k = 0; k < 3; ++k) {
    for (int j = 0; j < 64; ++j) {
      const int byte = 64 * k + j;
      const int from = byte + (byte % 3 == 0 ? 2 : byte % 3 == 1 ? 0 : -2);
      p.index[k][j] = static_cast<uint8_t>(from - kLow[k] < 64 ? from - kLow[k] : 64 + from - kHigh[k]);
    }
  }
  return p;
}

constexpr BgrPermutes kBgrPermutes = bgr_permutes();

// The table's own check: every index is within its two sources and picks the byte the formula asks for.
constexpr bool bgr_permutes_valid() {
  for (int k = 0; k < 3; ++k) {
    for (int j = 0; j < 64; ++j) {
      const int byte = 64 * k + j;
      const int from = byte + (byte % 3 == 0 ? 2 : byte % 3 == 1 ? 0 : -2);
      const int i = kBgrPermutes.index[k][j];
      if ((i < 64 ? kLow[k] + i : kHigh[k] + i - 64) != from) return false;
    }
  }
  return true;
}
static_assert(bgr_permutes_valid());

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) int64_t bgr_to_rgb_steps(const uint8_t* in, int64_t count,
                                                                                uint8_t* out) {
  const __m512i p0 = _mm512_load_si512(kBgrPermutes.index[0]);
  const __m512i p1 = _mm512_load_si512(kBgrPermutes.index[1]);
  const __m512i p2 = _mm512_load_si512(kBgrPermutes.index[2]);
  int64_t x = 0;
  for (; x + 64 <= count; x += 64) {
    const uint8_t* from = in + 3 * x;
    const __m512i o0 = _mm512_permutex2var_epi8(_mm512_loadu_si512(from + kLow[0]), p0,
                                                _mm512_loadu_si512(from + kHigh[0]));
    const __m512i o1 = _mm512_permutex2var_epi8(_mm512_loadu_si512(from + kLow[1]), p1,
                                                _mm512_loadu_si512(from + kHigh[1]));
    const __m512i o2 = _mm512_permutex2var_epi8(_mm512_loadu_si512(from + kLow[2]), p2,
                                                _mm512_loadu_si512(from + kHigh[2]));
    uint8_t* to = out + 3 * x;
    _mm512_storeu_si512(to, o0);
    _mm512_storeu_si512(to + 64, o1);
    _mm512_storeu_si512(to + 128, o2);
  }
  return x;
}

}  // namespace

void bgr_row_to_rgb_vbmi(const uint8_t* in, int32_t in_channels, int64_t count, uint8_t* out) {
  const int64_t done = in_channels == 3 ? bgr_to_rgb_steps(in, count, out) : 0;
  bgr_row_to_rgb_avx2(in + in_channels * done, in_channels, count - done, out + 3 * done);
}

}  // namespace kiln
