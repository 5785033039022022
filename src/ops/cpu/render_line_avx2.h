// The row loops of render_line_loops.h in AVX2 intrinsics, for the avx2 variant: a __m256 holds 8 rows of a column.
// Each intrinsic is the IEEE operation of the scalar expression it replaces, in the same order (min/max_ps return
// the second operand on ties and NaN, as kiln_minf/kiln_maxf do), so the images stay byte-identical to the scalar
// reference. Only the sign of a zero |v| can differ, and kiln_nearest_coverage() never lets it reach the result.
#include <immintrin.h>

// kiln_nearest_coverage() of 8 rows.
template <int32_t kThin>
inline __m256 nearest_coverage(__m256 best_d2, __m256 best_vx, __m256 best_vy, float r) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 d = _mm256_sqrt_ps(_mm256_max_ps(best_d2, _mm256_set1_ps(1e-8f)));
  const __m256 ux = _mm256_max_ps(_mm256_andnot_ps(sign, best_vx), _mm256_set1_ps(1e-4f));
  const __m256 uy = _mm256_andnot_ps(sign, best_vy);
  const __m256 big = _mm256_max_ps(ux, uy);
  const __m256 small = _mm256_max_ps(_mm256_min_ps(ux, uy), _mm256_mul_ps(_mm256_set1_ps(KILN_MIN_PROJ_B), d));
  const __m256 half = _mm256_set1_ps(0.5f);
  const __m256 h1 = _mm256_mul_ps(half, _mm256_sub_ps(big, small));
  const __m256 h2 = _mm256_mul_ps(half, _mm256_add_ps(big, small));
  const __m256 two = _mm256_set1_ps(2.0f);
  const __m256 inv_2bs = _mm256_div_ps(one, _mm256_mul_ps(_mm256_mul_ps(two, big), small));
  const __m256 inv_big = _mm256_mul_ps(_mm256_mul_ps(two, small), inv_2bs);
  const __m256 neg_h1 = _mm256_xor_ps(h1, sign);
  const __m256 neg_h2 = _mm256_xor_ps(h2, sign);
  const auto cdf = [&](__m256 s_scaled) {
    const __m256 s = _mm256_min_ps(_mm256_max_ps(s_scaled, neg_h2), h2);
    const __m256 below = _mm256_add_ps(s, h2);
    const __m256 above = _mm256_sub_ps(h2, s);
    const __m256 lo = _mm256_mul_ps(_mm256_mul_ps(below, below), inv_2bs);
    const __m256 hi = _mm256_sub_ps(one, _mm256_mul_ps(_mm256_mul_ps(above, above), inv_2bs));
    const __m256 lin = _mm256_add_ps(half, _mm256_mul_ps(s, inv_big));
    const __m256 upper = _mm256_blendv_ps(lin, hi, _mm256_cmp_ps(s, h1, _CMP_GT_OQ));
    return _mm256_blendv_ps(upper, lo, _mm256_cmp_ps(s, neg_h1, _CMP_LT_OQ));
  };
  const __m256 radius = _mm256_set1_ps(r);
  __m256 value = cdf(_mm256_mul_ps(_mm256_sub_ps(radius, d), d));
  if constexpr (kThin != 0) {
    value = _mm256_sub_ps(value, cdf(_mm256_mul_ps(_mm256_sub_ps(_mm256_xor_ps(radius, sign), d), d)));
  }
  return value;
}

// segment_rows() of render_line_loops.h, 8 columns at a time (up to 7 columns past `last` are written too; the
// next segment's rows overwrite them).
inline void segment_rows(const KilnSegment& g, int32_t first, int32_t last, float reach, int32_t h, int32_t* lo,
                         int32_t* hi) {
  if (!(g.dx > 0.0f)) {  // all points share one column (width 1)
    for (int32_t c = first; c <= last; ++c) kiln_line_segment_rows(c, reach, g, h, &lo[c - first], &hi[c - first]);
    return;
  }
  const __m256 iota = _mm256_setr_ps(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f);
  const __m256 band_half = _mm256_set1_ps(segment_band_half(g, reach));
  const __m256 reach8 = _mm256_set1_ps(reach);
  const __m256 ax = _mm256_set1_ps(g.ax);
  const __m256 ay = _mm256_set1_ps(g.ay);
  const __m256 x1 = _mm256_set1_ps(g.ax + g.dx);
  const __m256 slope = _mm256_set1_ps(g.slope);
  const __m256 top_row = _mm256_set1_ps(-1.0f);
  const __m256 bottom_row = _mm256_set1_ps(static_cast<float>(h));
  const __m256 last_row = _mm256_set1_ps(static_cast<float>(h - 1));
  for (int32_t c = first; c <= last; c += 8) {
    const __m256 cx = _mm256_add_ps(_mm256_set1_ps(static_cast<float>(c)), iota);
    const __m256 xa = _mm256_max_ps(ax, _mm256_sub_ps(cx, reach8));
    const __m256 xb = _mm256_min_ps(x1, _mm256_add_ps(cx, reach8));
    const __m256 ya = _mm256_add_ps(ay, _mm256_mul_ps(_mm256_sub_ps(xa, ax), slope));
    const __m256 yb = _mm256_add_ps(ay, _mm256_mul_ps(_mm256_sub_ps(xb, ax), slope));
    const __m256 line_y = _mm256_add_ps(ay, _mm256_mul_ps(_mm256_sub_ps(cx, ax), slope));
    const __m256 top = _mm256_max_ps(_mm256_sub_ps(_mm256_min_ps(ya, yb), reach8), _mm256_sub_ps(line_y, band_half));
    const __m256 bottom = _mm256_blendv_ps(
        _mm256_min_ps(_mm256_add_ps(_mm256_max_ps(ya, yb), reach8), _mm256_add_ps(line_y, band_half)), top_row,
        _mm256_cmp_ps(xa, xb, _CMP_GT_OQ));
    const __m256 top_clamped = _mm256_min_ps(_mm256_max_ps(_mm256_ceil_ps(top), _mm256_setzero_ps()), bottom_row);
    const __m256 bottom_clamped = _mm256_min_ps(_mm256_max_ps(_mm256_floor_ps(bottom), top_row), last_row);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo + (c - first)), _mm256_cvttps_epi32(top_clamped));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi + (c - first)), _mm256_cvttps_epi32(bottom_clamped));
  }
}

// nearest_rows() of render_line_loops.h: kVectors * 8 rows from y0.
template <int32_t kVectors>
inline void nearest_rows(const LineCandidate* candidates, int32_t count, int32_t y0, float* out_d2, float* out_vx,
                         float* out_vy) {
  const __m256 iota = _mm256_setr_ps(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f);
  const __m256 zero = _mm256_setzero_ps();
  const __m256 one = _mm256_set1_ps(1.0f);
  __m256 py[kVectors];
  __m256 best_d2[kVectors];
  __m256 best_vx[kVectors];
  __m256 best_vy[kVectors];
  for (int32_t v = 0; v < kVectors; ++v) {
    py[v] = _mm256_add_ps(_mm256_set1_ps(static_cast<float>(y0 + 8 * v)), iota);
    best_d2[v] = _mm256_set1_ps(KILN_NEAREST_NONE_D2);
    best_vx[v] = _mm256_set1_ps(KILN_NEAREST_NONE_VX);
    best_vy[v] = zero;
  }
  bool first = true;  // the first candidate is nearer than "none" everywhere: no compare
  for (int32_t i = 0; i < count; ++i) {
    const LineCandidate& c = candidates[i];
    if (c.y_hi < y0 || c.y_lo > y0 + 8 * kVectors - 1) continue;
    const __m256 ay = _mm256_set1_ps(c.g.ay);
    const __m256 dx = _mm256_set1_ps(c.g.dx);
    const __m256 dy = _mm256_set1_ps(c.g.dy);
    const __m256 ox = _mm256_set1_ps(c.ox);
    const __m256 ox_dx = _mm256_set1_ps(c.ox_dx);
    const __m256 inv_len2 = _mm256_set1_ps(c.g.inv_len2);
    for (int32_t v = 0; v < kVectors; ++v) {
      const __m256 oy = _mm256_sub_ps(py[v], ay);
      __m256 t = _mm256_mul_ps(_mm256_add_ps(ox_dx, _mm256_mul_ps(oy, dy)), inv_len2);
      t = _mm256_min_ps(_mm256_max_ps(t, zero), one);
      const __m256 vx = _mm256_sub_ps(ox, _mm256_mul_ps(t, dx));
      const __m256 vy = _mm256_sub_ps(oy, _mm256_mul_ps(t, dy));
      const __m256 d2 = _mm256_add_ps(_mm256_mul_ps(vx, vx), _mm256_mul_ps(vy, vy));
      if (first) {
        best_d2[v] = d2;
        best_vx[v] = vx;
        best_vy[v] = vy;
      } else {
        const __m256 nearer = _mm256_cmp_ps(d2, best_d2[v], _CMP_LT_OQ);
        best_d2[v] = _mm256_min_ps(d2, best_d2[v]);
        best_vx[v] = _mm256_blendv_ps(best_vx[v], vx, nearer);
        best_vy[v] = _mm256_blendv_ps(best_vy[v], vy, nearer);
      }
    }
    first = false;
  }
  for (int32_t v = 0; v < kVectors; ++v) {
    _mm256_storeu_ps(out_d2 + 8 * v, best_d2[v]);
    _mm256_storeu_ps(out_vx + 8 * v, best_vx[v]);
    _mm256_storeu_ps(out_vy + 8 * v, best_vy[v]);
  }
}

// coverage_rows() of render_line_loops.h (lanes is a multiple of 8).
template <int32_t kThin>
inline void coverage_rows(float* d2, const float* vx, const float* vy, int32_t lanes, float r) {
  for (int32_t j = 0; j < lanes; j += 8) {
    _mm256_storeu_ps(
        d2 + j, nearest_coverage<kThin>(_mm256_loadu_ps(d2 + j), _mm256_loadu_ps(vx + j), _mm256_loadu_ps(vy + j), r));
  }
}

// write_rows() of render_line_loops.h.
template <typename Pixel>
inline void write_rows(const float* coverage, int32_t lanes, int32_t rows, float background, float ink, Pixel* p,
                       int64_t stride) {
  if constexpr (sizeof(Pixel) == 1) {
    for (int32_t j = 0; j < lanes; j += 8) {
      const __m256 level = _mm256_add_ps(
          _mm256_set1_ps(background), _mm256_mul_ps(_mm256_set1_ps(ink - background), _mm256_loadu_ps(coverage + j)));
      const __m256 clamped = _mm256_min_ps(
          _mm256_max_ps(_mm256_add_ps(level, _mm256_set1_ps(0.5f)), _mm256_setzero_ps()), _mm256_set1_ps(255.0f));
      const __m256i levels = _mm256_cvttps_epi32(clamped);
      const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(levels), _mm256_extracti128_si256(levels, 1));
      const __m128i bytes = _mm_packus_epi16(words, words);
      if (rows - j >= 8) {
        p[0] = static_cast<uint8_t>(_mm_extract_epi8(bytes, 0));
        p[stride] = static_cast<uint8_t>(_mm_extract_epi8(bytes, 1));
        p[2 * stride] = static_cast<uint8_t>(_mm_extract_epi8(bytes, 2));
        p[3 * stride] = static_cast<uint8_t>(_mm_extract_epi8(bytes, 3));
        p[4 * stride] = static_cast<uint8_t>(_mm_extract_epi8(bytes, 4));
        p[5 * stride] = static_cast<uint8_t>(_mm_extract_epi8(bytes, 5));
        p[6 * stride] = static_cast<uint8_t>(_mm_extract_epi8(bytes, 6));
        p[7 * stride] = static_cast<uint8_t>(_mm_extract_epi8(bytes, 7));
        p += 8 * stride;
      } else {
        alignas(16) uint8_t tail[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(tail), bytes);
        for (int32_t k = 0; k < rows - j; ++k) p[k * stride] = tail[k];
        return;
      }
    }
  } else {
    for (int32_t j = 0; j < rows; ++j) p[j * stride] = level_to_pixel<Pixel>(kiln_shade(coverage[j], background, ink));
  }
}
