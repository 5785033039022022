// Row loops of the CPU quality op, included once per ISA variant: quality_cpu.cpp (generic, baseline ISA) and
// quality_avx2.cpp (-mavx2; explicit AVX2 row sums). Every variant sums the same exact integers (and exact
// double sums of magnitudes, see kChunk), so all give identical results bit for bit.
#ifndef KILN_OPS_CPU_QUALITY_LOOPS_DECL
#define KILN_OPS_CPU_QUALITY_LOOPS_DECL
#include <cstdint>

#include "ops/quality.h"

namespace kiln {

// One work item: rows [y0, y1) of image `image`.
struct QualityWorkItem {
  int64_t image = 0;
  int32_t y0 = 0;
  int32_t y1 = 0;
};

// partial[k] = the sums of items[k] for k in [begin, end).
namespace generic {
void quality_items(const OpCall& call, const QualityWorkItem* items, int64_t begin, int64_t end, bool bgr,
                   KilnQualitySums* partial);
}  // namespace generic
namespace avx2 {
void quality_items(const OpCall& call, const QualityWorkItem* items, int64_t begin, int64_t end, bool bgr,
                   KilnQualitySums* partial);
}  // namespace avx2

}  // namespace kiln
#endif  // KILN_OPS_CPU_QUALITY_LOOPS_DECL

#ifdef KILN_QUALITY_VARIANT
#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace kiln {
namespace KILN_QUALITY_VARIANT {

namespace {

// Columns summed per chunk: int32 sums of up to 2048 squared Laplacians stay below 2048 * 1020^2 < 2^31, and a
// double sum of up to 2048 magnitudes (multiples of 2^-23 below 2^11) stays below 2^30, so it is exact in double
// (53-bit mantissa) whatever the order of the additions.
constexpr int32_t kChunk = 2048;

// Row buffers of one worker: three gray rows padded by one reflected pixel each side, and one row of magnitudes.
struct RowBuffers {
  std::vector<uint8_t> gray[3];
  int32_t tag[3] = {-1, -1, -1};
  const ImageView* image = nullptr;
  std::vector<float> magnitude;

  void reset_for(const ImageView& v) {
    const auto padded = static_cast<size_t>(v.width) + 2;
    for (auto& g : gray) {
      if (g.size() < padded) g.resize(padded);
    }
    if (magnitude.size() < static_cast<size_t>(v.width)) magnitude.resize(static_cast<size_t>(v.width));
    tag[0] = tag[1] = tag[2] = -1;
    image = &v;
  }
};

// Gray levels of an interleaved row; channel indices as constants so the loop vectorizes.
template <int kChannels, int kRed, int kBlue>
void gray_hwc(const uint8_t* __restrict src, int32_t width, uint8_t* __restrict g) {
  for (int32_t x = 0; x < width; ++x) {
    const uint8_t* p = src + kChannels * x;
    g[x] = static_cast<uint8_t>(kiln_gray_u8(p[kRed], p[1], p[kBlue]));
  }
}

// Gray levels of row y of `v` into out[1 .. width], with the reflect-101 pixels at out[0] and out[width + 1].
void gray_row(const ImageView& v, int32_t y, bool bgr, uint8_t* out) {
  const int32_t w = v.width;
  uint8_t* g = out + 1;
  if (v.channels == 1) {
    std::memcpy(g, v.row<const uint8_t>(y), static_cast<size_t>(w));
  } else if (v.layout == Layout::kHWC) {
    const uint8_t* src = v.row<const uint8_t>(y);
    if (v.channels == 3) {
      bgr ? gray_hwc<3, 2, 0>(src, w, g) : gray_hwc<3, 0, 2>(src, w, g);
    } else {
      bgr ? gray_hwc<4, 2, 0>(src, w, g) : gray_hwc<4, 0, 2>(src, w, g);
    }
  } else {
    const uint8_t* r = v.row<const uint8_t>(y, bgr ? 2 : 0);
    const uint8_t* gg = v.row<const uint8_t>(y, 1);
    const uint8_t* b = v.row<const uint8_t>(y, bgr ? 0 : 2);
    for (int32_t x = 0; x < w; ++x) g[x] = static_cast<uint8_t>(kiln_gray_u8(r[x], gg[x], b[x]));
  }
  out[0] = g[kiln_quality_reflect(-1, w)];
  out[w + 1] = g[kiln_quality_reflect(w, w)];
}

// The padded gray row `y`, converted at most once while it stays among the three rows in use.
const uint8_t* row_get(RowBuffers& rb, int32_t y, const int32_t keep[3], bool bgr) {
  for (int k = 0; k < 3; ++k) {
    if (rb.tag[k] == y) return rb.gray[k].data();
  }
  for (int k = 0; k < 3; ++k) {
    if (rb.tag[k] != keep[0] && rb.tag[k] != keep[1] && rb.tag[k] != keep[2]) {
      gray_row(*rb.image, y, bgr, rb.gray[k].data());
      rb.tag[k] = y;
      return rb.gray[k].data();
    }
  }
  return nullptr;  // unreachable: at most three rows are kept
}

#if defined(__AVX2__)
// 16 gray levels starting at p, widened to int16.
inline __m256i load16(const uint8_t* p) {
  return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

inline int64_t hsum_epi32(__m256i v) {
  alignas(32) int32_t t[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(t), v);
  int64_t s = 0;
  for (int k = 0; k < 8; ++k) s += t[k];
  return s;
}
#endif

// One row's sums: up/cur/dn are padded gray rows (index x + 1 is column x).
void row_sums(const uint8_t* up, const uint8_t* cur, const uint8_t* dn, int32_t width, float* magnitude,
              KilnQualitySums& sums) {
  for (int32_t x0 = 0; x0 < width; x0 += kChunk) {
    const int32_t n = std::min(kChunk, width - x0);
    const uint8_t* u = up + x0;
    const uint8_t* c = cur + x0;
    const uint8_t* d = dn + x0;
    int64_t gray_sum = 0, gray_sq = 0, lap_sum = 0, lap_sq = 0;
    double lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int32_t xs = 0;  // first column of the scalar loop
#if defined(__AVX2__)
    {
      // int16 lanes: gray levels, Laplacian and Sobel responses all fit (|value| <= 1020). madd_epi16 pairs
      // adjacent lanes into int32 sums: per lane at most 2 * 1020^2 per step, 128 steps per chunk < 2^31.
      const __m256i ones = _mm256_set1_epi16(1);
      __m256i vgs = _mm256_setzero_si256(), vgq = _mm256_setzero_si256();
      __m256i vls = _mm256_setzero_si256(), vlq = _mm256_setzero_si256();
      __m256d m0 = _mm256_setzero_pd(), m1 = _mm256_setzero_pd(), m2 = _mm256_setzero_pd(),
              m3 = _mm256_setzero_pd();
      for (; xs + 16 <= n; xs += 16) {
        const __m256i g00 = load16(u + xs), g01 = load16(u + xs + 1), g02 = load16(u + xs + 2);
        const __m256i g10 = load16(c + xs), g11 = load16(c + xs + 1), g12 = load16(c + xs + 2);
        const __m256i g20 = load16(d + xs), g21 = load16(d + xs + 1), g22 = load16(d + xs + 2);
        const __m256i lap = _mm256_sub_epi16(_mm256_add_epi16(_mm256_add_epi16(g01, g10), _mm256_add_epi16(g12, g21)),
                                             _mm256_slli_epi16(g11, 2));
        const __m256i gx = _mm256_add_epi16(
            _mm256_add_epi16(_mm256_sub_epi16(g02, g00), _mm256_sub_epi16(g22, g20)),
            _mm256_slli_epi16(_mm256_sub_epi16(g12, g10), 1));
        const __m256i gy = _mm256_add_epi16(
            _mm256_add_epi16(_mm256_sub_epi16(g20, g00), _mm256_sub_epi16(g22, g02)),
            _mm256_slli_epi16(_mm256_sub_epi16(g21, g01), 1));
        vgs = _mm256_add_epi32(vgs, _mm256_madd_epi16(g11, ones));
        vgq = _mm256_add_epi32(vgq, _mm256_madd_epi16(g11, g11));
        vls = _mm256_add_epi32(vls, _mm256_madd_epi16(lap, ones));
        vlq = _mm256_add_epi32(vlq, _mm256_madd_epi16(lap, lap));
        // gx^2 + gy^2 per pixel: interleave (gx, gy) pairs and madd them with themselves.
        const __m256i lo = _mm256_unpacklo_epi16(gx, gy);
        const __m256i hi = _mm256_unpackhi_epi16(gx, gy);
        const __m256 s0 = _mm256_sqrt_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(lo, lo)));
        const __m256 s1 = _mm256_sqrt_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(hi, hi)));
        m0 = _mm256_add_pd(m0, _mm256_cvtps_pd(_mm256_castps256_ps128(s0)));
        m1 = _mm256_add_pd(m1, _mm256_cvtps_pd(_mm256_extractf128_ps(s0, 1)));
        m2 = _mm256_add_pd(m2, _mm256_cvtps_pd(_mm256_castps256_ps128(s1)));
        m3 = _mm256_add_pd(m3, _mm256_cvtps_pd(_mm256_extractf128_ps(s1, 1)));
      }
      gray_sum += hsum_epi32(vgs);
      gray_sq += hsum_epi32(vgq);
      lap_sum += hsum_epi32(vls);
      lap_sq += hsum_epi32(vlq);
      alignas(32) double t[4];
      _mm256_store_pd(t, _mm256_add_pd(_mm256_add_pd(m0, m1), _mm256_add_pd(m2, m3)));
      for (int k = 0; k < 4; ++k) lanes[k] += t[k];
    }
#endif
    {
      int32_t gs = 0, gq = 0, ls = 0, lq = 0;
      for (int32_t x = xs; x < n; ++x) {
        const int32_t g00 = u[x], g01 = u[x + 1], g02 = u[x + 2];
        const int32_t g10 = c[x], g11 = c[x + 1], g12 = c[x + 2];
        const int32_t g20 = d[x], g21 = d[x + 1], g22 = d[x + 2];
        const int32_t lap = g01 + g10 + g12 + g21 - 4 * g11;
        const int32_t gx = (g02 - g00) + 2 * (g12 - g10) + (g22 - g20);
        const int32_t gy = (g20 + 2 * g21 + g22) - (g00 + 2 * g01 + g02);
        gs += g11;
        gq += g11 * g11;
        ls += lap;
        lq += lap * lap;
        magnitude[x] = kiln_sqrtf(static_cast<float>(gx * gx + gy * gy));
      }
      gray_sum += gs;
      gray_sq += gq;
      lap_sum += ls;
      lap_sq += lq;
    }
    // Exact in any order (see kChunk): eight lanes so the compiler can vectorize the additions.
    int32_t x = xs;
    for (; x + 8 <= n; x += 8) {
      for (int k = 0; k < 8; ++k) lanes[k] += static_cast<double>(magnitude[x + k]);
    }
    for (; x < n; ++x) lanes[0] += static_cast<double>(magnitude[x]);
    const double mag = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    sums.gray_sum += gray_sum;
    sums.gray_sq += gray_sq;
    sums.lap_sum += lap_sum;
    sums.lap_sq += lap_sq;
    sums.mag_fixed += static_cast<int64_t>(mag * static_cast<double>(KILN_QUALITY_MAG_SCALE));
  }
}

KilnQualitySums block_sums(RowBuffers& rb, const ImageView& v, int32_t y0, int32_t y1, bool bgr) {
  KilnQualitySums sums{};
  rb.reset_for(v);
  for (int32_t y = y0; y < y1; ++y) {
    const int32_t keep[3] = {kiln_quality_reflect(y - 1, v.height), y, kiln_quality_reflect(y + 1, v.height)};
    const uint8_t* up = row_get(rb, keep[0], keep, bgr);
    const uint8_t* cur = row_get(rb, keep[1], keep, bgr);
    const uint8_t* dn = row_get(rb, keep[2], keep, bgr);
    row_sums(up, cur, dn, v.width, rb.magnitude.data(), sums);
  }
  return sums;
}

}  // namespace

void quality_items(const OpCall& call, const QualityWorkItem* items, int64_t begin, int64_t end, bool bgr,
                   KilnQualitySums* partial) {
  RowBuffers rb;
  for (int64_t k = begin; k < end; ++k) {
    const QualityWorkItem& item = items[k];
    partial[k] = block_sums(rb, call.in[item.image], item.y0, item.y1, bgr);
  }
}

}  // namespace KILN_QUALITY_VARIANT
}  // namespace kiln
#endif  // KILN_QUALITY_VARIANT
