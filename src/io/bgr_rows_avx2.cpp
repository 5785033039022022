#include <immintrin.h>

#include "io/bgr_rows.h"

namespace kiln {

namespace {

// 8 pixels a step: the two 128-bit lanes each take 4 pixels (pshufb works within a lane), then their 12 bytes are
// packed together; 32 bytes are stored, of which the last 8 are written again by the next step (or the tail loop).
int64_t bgr_to_rgb_steps(const uint8_t* in, int64_t count, uint8_t* out) {
  const __m256i spread = _mm256_setr_epi32(0, 1, 2, 3, 3, 4, 5, 6);  // pixels 4-7 to the upper lane
  const __m256i pack = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
  const __m256i swap = _mm256_setr_epi8(2, 1, 0, 5, 4, 3, 8, 7, 6, 11, 10, 9, 12, 13, 14, 15,  //
                                        2, 1, 0, 5, 4, 3, 8, 7, 6, 11, 10, 9, 12, 13, 14, 15);
  int64_t x = 0;
  for (; (x + 8) * 3 + 8 <= count * 3; x += 8) {  // the 32-byte load and store stay inside the row
    const __m256i bgr = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 3 * x));
    const __m256i rgb = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(bgr, spread), swap);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 3 * x), _mm256_permutevar8x32_epi32(rgb, pack));
  }
  return x;
}

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
