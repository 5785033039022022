// The unsharp Gaussian (and the unsharp rule after it) on u8 HWC images in fixed point, included once per ISA
// variant: enhance_cpu.cpp (generic, baseline ISA) and enhance_blur_avx2.cpp (-mavx2; explicit AVX2). The scalar
// reference mode (KILN_CPU_ISA=scalar) keeps the float loops of enhance_cpu.cpp, which equal enhance_px.h bit for bit.
//
// The fixed-point blur, per band of output rows with a ring of 2r + 1 horizontal rows (no full intermediate image):
//  - horizontal: sum_k qh[|k|] * x[reflect(i + k * C)] with integer weights qh summing to 2^Sh, symmetric taps folded
//    (x[i - kC] + x[i + kC]) before multiplying; rounded half up to 8.6 fixed point (int16, <= 255 * 64);
//  - vertical: the same over the ring rows with weights qv summing to 2^Sv (folded pairs <= 32640 fit int16; the
//    int32 sums stay below 16320 * 2^17 < 2^31), rounded half up to u8;
//  - unsharp: kiln_enhance_unsharp of (x, blurred) exactly (the SIMD loops compute PIL's rule in int16 lanes).
// Every product is exact integer arithmetic in a fixed order, so all variants and all thread counts give the same
// bytes. Against the float reference the blurred value differs by at most one level: enhance_blur_fixed_make
// bounds |fixed - float| (weight quantization, the 8.6 rounding, float rounding of the reference) and refuses
// (the caller then runs the float loops) unless the bound is below one level. So the unsharp output differs from
// the reference by at most ceil(percent / 100) levels where the threshold test agrees; where the blurred values
// sit on both sides of the threshold (|x - blurred| = threshold vs threshold + 1) by at most
// (threshold + 1) * percent / 100 (see enhance_unsharp_tolerance).
#ifndef KILN_OPS_CPU_ENHANCE_BLUR_LOOPS_DECL
#define KILN_OPS_CPU_ENHANCE_BLUR_LOOPS_DECL
#include <cstdint>

#include "ops/enhance_px.h"

namespace kiln {

// The fixed-point kernel of one Gaussian (taps r - k and r + k share weight[k]; weight[0] is the centre).
struct EnhanceBlurFixed {
  int32_t radius = 0;   // ksize / 2
  int32_t shift_h = 0;  // horizontal sums (scale 2^Sh) to 8.6: Sh - 6
  int32_t shift_v = 0;  // vertical sums (scale 2^(Sv + 6)) to u8: Sv + 6
  int32_t percent = 0;
  int32_t threshold = 0;
  int16_t weight_h[KILN_ENHANCE_MAX_KSIZE / 2 + 1] = {};
  int16_t weight_v[KILN_ENHANCE_MAX_KSIZE / 2 + 1] = {};
};

// One call's images and scratch: output rows of `out` are the blur of `in` (unsharp false) or PIL's unsharp rule
// of `in` and its blur (unsharp true). in and out must not overlap.
struct EnhanceBlurRows {
  const uint8_t* in = nullptr;
  uint8_t* out = nullptr;
  int64_t in_stride = 0;
  int64_t out_stride = 0;
  int32_t width = 0;
  int32_t height = 0;
  int32_t channels = 0;
  bool unsharp = false;
  const int32_t* xidx = nullptr;  // width + 2r reflect-101 source columns of padded column j (x = j - r)
  int16_t* pad = nullptr;         // (width + 2r) * channels values: one input row, padded
  int16_t* ring = nullptr;        // (2r + 1) * width * channels values: the horizontal rows in use
};

// The fixed-point kernel for the float weights w (ksize taps, symmetric) and the unsharp rule's parameters; false
// when the error bound (written to *bound, in u8 levels) is not below one level: then the float loops must run.
bool enhance_blur_fixed_make(const float* w, int32_t ksize, int32_t percent, int32_t threshold, EnhanceBlurFixed* f,
                             double* bound);

// The largest difference allowed between the fixed-point and the reference unsharp output (see the top comment).
int32_t enhance_unsharp_tolerance(int32_t percent, int32_t threshold);

// Output rows [y0, y1) of b.
namespace generic {
void enhance_blur_rows(const EnhanceBlurFixed& f, const EnhanceBlurRows& b, int32_t y0, int32_t y1);
}  // namespace generic
namespace avx2 {
void enhance_blur_rows(const EnhanceBlurFixed& f, const EnhanceBlurRows& b, int32_t y0, int32_t y1);
}  // namespace avx2

}  // namespace kiln
#endif  // KILN_OPS_CPU_ENHANCE_BLUR_LOOPS_DECL

#ifdef KILN_ENHANCE_BLUR_VARIANT
// No standard-library templates below: their instances would be shared between variants built with different
// flags (the linker keeps one). The variant's own helpers sit in an anonymous namespace.
#if defined(__AVX2__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kiln {
namespace KILN_ENHANCE_BLUR_VARIANT {
namespace {

constexpr int64_t kSpan = 256;

// Horizontal pass of values [i0, i0 + len) of a padded row (base = first unpadded value), portable loops.
void hrow_span(const EnhanceBlurFixed& f, const int16_t* base, int64_t C, int64_t i0, int64_t len, int16_t* out) {
  int32_t acc[kSpan];
  const int16_t* b = base + i0;
  const int32_t w0 = f.weight_h[0];
  for (int64_t j = 0; j < len; ++j) acc[j] = w0 * b[j];
  for (int32_t k = 1; k <= f.radius; ++k) {
    const int32_t wk = f.weight_h[k];
    const int16_t* lo = b - k * C;
    const int16_t* hi = b + k * C;
    for (int64_t j = 0; j < len; ++j) acc[j] += wk * (lo[j] + hi[j]);
  }
  const int32_t round = 1 << (f.shift_h - 1);
  for (int64_t j = 0; j < len; ++j) out[i0 + j] = static_cast<int16_t>((acc[j] + round) >> f.shift_h);
}

// Vertical pass (rows[k]: the horizontal row of tap k) and the output of values [i0, i0 + len).
void vrow_span(const EnhanceBlurFixed& f, const int16_t* const* rows, int64_t i0, int64_t len, const uint8_t* in,
               uint8_t* out, bool unsharp) {
  int32_t acc[kSpan];
  const int32_t r = f.radius;
  const int16_t* c = rows[r] + i0;
  const int32_t w0 = f.weight_v[0];
  for (int64_t j = 0; j < len; ++j) acc[j] = w0 * c[j];
  for (int32_t k = 1; k <= r; ++k) {
    const int32_t wk = f.weight_v[k];
    const int16_t* lo = rows[r - k] + i0;
    const int16_t* hi = rows[r + k] + i0;
    for (int64_t j = 0; j < len; ++j) acc[j] += wk * (lo[j] + hi[j]);
  }
  const int32_t round = 1 << (f.shift_v - 1);
  for (int64_t j = 0; j < len; ++j) {
    const int32_t blurred = (acc[j] + round) >> f.shift_v;
    out[i0 + j] = unsharp ? kiln_enhance_unsharp(in[i0 + j], blurred, f.percent, f.threshold)
                          : static_cast<uint8_t>(blurred);
  }
}

// The explicit SIMD loops, written once over a few wrappers: 16 int16 lanes with AVX2, 8 with SSE2 (the x86-64
// baseline, so the generic variant has them too); other targets keep the portable loops alone.
#if defined(__AVX2__)
#define KILN_ENHANCE_BLUR_SIMD 1
using Vec = __m256i;
constexpr int64_t kLanes = 16;
inline Vec v_load(const int16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const Vec*>(p)); }
inline void v_store(int16_t* p, Vec v) { _mm256_storeu_si256(reinterpret_cast<Vec*>(p), v); }
inline Vec v_load_u8(const uint8_t* p) {
  return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline void v_store_u8(uint8_t* p, Vec v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm_packus_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}
inline Vec v_zero() { return _mm256_setzero_si256(); }
inline Vec v_set16(int16_t x) { return _mm256_set1_epi16(x); }
inline Vec v_set32(int32_t x) { return _mm256_set1_epi32(x); }
inline Vec v_add16(Vec a, Vec b) { return _mm256_add_epi16(a, b); }
inline Vec v_sub16(Vec a, Vec b) { return _mm256_sub_epi16(a, b); }
inline Vec v_add32(Vec a, Vec b) { return _mm256_add_epi32(a, b); }
inline Vec v_and(Vec a, Vec b) { return _mm256_and_si256(a, b); }
inline Vec v_madd(Vec a, Vec b) { return _mm256_madd_epi16(a, b); }
inline Vec v_unpacklo16(Vec a, Vec b) { return _mm256_unpacklo_epi16(a, b); }
inline Vec v_unpackhi16(Vec a, Vec b) { return _mm256_unpackhi_epi16(a, b); }
inline Vec v_sra32(Vec a, __m128i n) { return _mm256_sra_epi32(a, n); }
inline Vec v_packs32(Vec a, Vec b) { return _mm256_packs_epi32(a, b); }
inline Vec v_mullo16(Vec a, Vec b) { return _mm256_mullo_epi16(a, b); }
inline Vec v_div100(Vec n) { return _mm256_srli_epi16(_mm256_mulhi_epu16(n, _mm256_set1_epi16(5243)), 3); }
inline Vec v_cmpgt16(Vec a, Vec b) { return _mm256_cmpgt_epi16(a, b); }
inline Vec v_abs16(Vec a) { return _mm256_abs_epi16(a); }
inline Vec v_copysign16(Vec t, Vec d) { return _mm256_sign_epi16(t, d); }  // t >= 0; d == 0 only where t == 0
#elif defined(__SSE2__)
#define KILN_ENHANCE_BLUR_SIMD 1
using Vec = __m128i;
constexpr int64_t kLanes = 8;
inline Vec v_load(const int16_t* p) { return _mm_loadu_si128(reinterpret_cast<const Vec*>(p)); }
inline void v_store(int16_t* p, Vec v) { _mm_storeu_si128(reinterpret_cast<Vec*>(p), v); }
inline Vec v_load_u8(const uint8_t* p) {
  return _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), _mm_setzero_si128());
}
inline void v_store_u8(uint8_t* p, Vec v) { _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(v, v)); }
inline Vec v_zero() { return _mm_setzero_si128(); }
inline Vec v_set16(int16_t x) { return _mm_set1_epi16(x); }
inline Vec v_set32(int32_t x) { return _mm_set1_epi32(x); }
inline Vec v_add16(Vec a, Vec b) { return _mm_add_epi16(a, b); }
inline Vec v_sub16(Vec a, Vec b) { return _mm_sub_epi16(a, b); }
inline Vec v_add32(Vec a, Vec b) { return _mm_add_epi32(a, b); }
inline Vec v_and(Vec a, Vec b) { return _mm_and_si128(a, b); }
inline Vec v_madd(Vec a, Vec b) { return _mm_madd_epi16(a, b); }
inline Vec v_unpacklo16(Vec a, Vec b) { return _mm_unpacklo_epi16(a, b); }
inline Vec v_unpackhi16(Vec a, Vec b) { return _mm_unpackhi_epi16(a, b); }
inline Vec v_sra32(Vec a, __m128i n) { return _mm_sra_epi32(a, n); }
inline Vec v_packs32(Vec a, Vec b) { return _mm_packs_epi32(a, b); }
inline Vec v_mullo16(Vec a, Vec b) { return _mm_mullo_epi16(a, b); }
inline Vec v_div100(Vec n) { return _mm_srli_epi16(_mm_mulhi_epu16(n, _mm_set1_epi16(5243)), 3); }
inline Vec v_cmpgt16(Vec a, Vec b) { return _mm_cmpgt_epi16(a, b); }
inline Vec v_abs16(Vec a) { return _mm_max_epi16(a, _mm_sub_epi16(_mm_setzero_si128(), a)); }
inline Vec v_copysign16(Vec t, Vec d) {  // t >= 0
  const Vec m = _mm_srai_epi16(d, 15);
  return _mm_sub_epi16(_mm_xor_si128(t, m), m);
}
#endif

#if defined(KILN_ENHANCE_BLUR_SIMD)
// Weight pairs (weight[2p] in the low, weight[2p + 1] in the high int16 of each int32) for madd.
void pair_weights(const int16_t* weight, int32_t radius, Vec* pairs) {
  for (int32_t p = 0; 2 * p <= radius; ++p) {
    const int32_t hi = 2 * p + 1 <= radius ? weight[2 * p + 1] : 0;
    pairs[p] = v_set32(static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint16_t>(hi)) << 16) |
                                            static_cast<uint16_t>(weight[2 * p])));
  }
}

// The folded sums of kV consecutive vectors: terms t(k, v) for k = 0 (the centre) .. r, taken in pairs
// (t(2p), t(2p + 1)) against pairs[p] (the last one alone when r is even), int32 sums of the unpacklo and unpackhi
// lanes, then (sum + 2^(shift - 1)) >> shift packed back to int16 in order (unpacks and pack work per 128 bits).
// Blocks of vectors keep the sums in registers and load each weight and row pointer once per block.
template <int kV, typename Term>
inline void fold_block(const Vec* pairs, int32_t r, Vec half, __m128i shift, const Term& t, Vec* out) {
  Vec lo[kV], hi[kV];
  const auto add = [&](int32_t k, bool single, Vec w) {
    for (int v = 0; v < kV; ++v) {
      const Vec a = t(k, v);
      const Vec b = single ? v_zero() : t(k + 1, v);
      lo[v] = v_add32(lo[v], v_madd(v_unpacklo16(a, b), w));
      hi[v] = v_add32(hi[v], v_madd(v_unpackhi16(a, b), w));
    }
  };
  for (int v = 0; v < kV; ++v) lo[v] = hi[v] = v_zero();
  add(0, r == 0, pairs[0]);
  int32_t k = 2;
  for (; k + 1 <= r; k += 2) add(k, false, pairs[k / 2]);
  if (k == r) add(k, true, pairs[k / 2]);
  for (int v = 0; v < kV; ++v)
    out[v] = v_packs32(v_sra32(v_add32(lo[v], half), shift), v_sra32(v_add32(hi[v], half), shift));
}

constexpr int kBlockVecs = 4;

// Values [0, n - n % kLanes) of the horizontal pass; returns how many.
int64_t hrow_simd(const EnhanceBlurFixed& f, const int16_t* base, int64_t C, int64_t n, int16_t* out) {
  Vec pairs[KILN_ENHANCE_MAX_KSIZE / 4 + 2];
  pair_weights(f.weight_h, f.radius, pairs);
  const Vec half = v_set32(1 << (f.shift_h - 1));
  const __m128i shift = _mm_cvtsi32_si128(f.shift_h);
  int64_t i = 0;
  const auto block = [&]<int kV>() {
    const int16_t* b = base + i;
    const auto term = [&](int32_t k, int v) {
      const int16_t* p = b + v * kLanes;
      return k == 0 ? v_load(p) : v_add16(v_load(p - k * C), v_load(p + k * C));
    };
    Vec res[kV];
    fold_block<kV>(pairs, f.radius, half, shift, term, res);
    for (int v = 0; v < kV; ++v) v_store(out + i + v * kLanes, res[v]);
  };
  for (; i + kBlockVecs * kLanes <= n; i += kBlockVecs * kLanes) block.template operator()<kBlockVecs>();
  for (; i + kLanes <= n; i += kLanes) block.template operator()<1>();
  return i;
}

// PIL's rule in int16 lanes: x + sign(d) * (|d| * percent / 100) where |d| > threshold, else x, with
// |d| * percent / 100 = |d| * (percent / 100) + |d| * (percent % 100) / 100 exactly; the last division is
// (n * 5243) >> 19, exact for n <= 255 * 99 (checked by a test); the sum (<= 25752) and x + it fit int16.
inline Vec unsharp_simd(Vec x, Vec blurred, Vec whole, Vec part, Vec threshold) {
  const Vec d = v_sub16(x, blurred);
  const Vec magnitude = v_abs16(d);
  const Vec t = v_add16(v_mullo16(magnitude, whole), v_div100(v_mullo16(magnitude, part)));
  return v_add16(x, v_copysign16(v_and(t, v_cmpgt16(magnitude, threshold)), d));
}

// Values [0, n - n % kLanes) of the vertical pass and the output; returns how many.
int64_t vrow_simd(const EnhanceBlurFixed& f, const int16_t* const* rows, int64_t n, const uint8_t* in, uint8_t* out,
                  bool unsharp) {
  Vec pairs[KILN_ENHANCE_MAX_KSIZE / 4 + 2];
  pair_weights(f.weight_v, f.radius, pairs);
  const int32_t r = f.radius;
  const Vec half = v_set32(1 << (f.shift_v - 1));
  const __m128i shift = _mm_cvtsi32_si128(f.shift_v);
  const Vec whole = v_set16(static_cast<int16_t>(f.percent / 100));
  const Vec part = v_set16(static_cast<int16_t>(f.percent % 100));
  const Vec threshold = v_set16(static_cast<int16_t>(f.threshold < 32767 ? f.threshold : 32767));
  int64_t i = 0;
  const auto block = [&]<int kV>() {
    const auto term = [&](int32_t k, int v) {
      const int64_t at = i + v * kLanes;
      return k == 0 ? v_load(rows[r] + at) : v_add16(v_load(rows[r - k] + at), v_load(rows[r + k] + at));
    };
    Vec res[kV];
    fold_block<kV>(pairs, r, half, shift, term, res);
    for (int v = 0; v < kV; ++v) {
      const int64_t at = i + v * kLanes;
      v_store_u8(out + at, unsharp ? unsharp_simd(v_load_u8(in + at), res[v], whole, part, threshold) : res[v]);
    }
  };
  for (; i + kBlockVecs * kLanes <= n; i += kBlockVecs * kLanes) block.template operator()<kBlockVecs>();
  for (; i + kLanes <= n; i += kLanes) block.template operator()<1>();
  return i;
}
#endif

// The horizontal row of input row `sy` into dst.
void hrow(const EnhanceBlurFixed& f, const EnhanceBlurRows& b, int32_t sy, int16_t* dst) {
  const int64_t C = b.channels;
  const int64_t n = static_cast<int64_t>(b.width) * C;
  const int32_t r = f.radius;
  const uint8_t* in = b.in + sy * b.in_stride;
  int16_t* pad = b.pad;
  for (int64_t i = 0; i < n; ++i) pad[r * C + i] = in[i];
  for (int64_t j = 0; j < r; ++j) {
    const int64_t left = static_cast<int64_t>(b.xidx[j]) * C;
    const int64_t right = static_cast<int64_t>(b.xidx[r + b.width + j]) * C;
    for (int64_t c = 0; c < C; ++c) {
      pad[j * C + c] = in[left + c];
      pad[(r + b.width + j) * C + c] = in[right + c];
    }
  }
  const int16_t* base = pad + r * C;
  int64_t i = 0;
#if defined(KILN_ENHANCE_BLUR_SIMD)
  i = hrow_simd(f, base, C, n, dst);
#endif
  for (; i < n; i += kSpan) hrow_span(f, base, C, i, n - i < kSpan ? n - i : kSpan, dst);
}

}  // namespace

void enhance_blur_rows(const EnhanceBlurFixed& f, const EnhanceBlurRows& b, int32_t y0, int32_t y1) {
  const int32_t r = f.radius;
  const int32_t taps = 2 * r + 1;
  const int64_t n = static_cast<int64_t>(b.width) * b.channels;
  const int32_t first = y0 - r;  // the first ring row (a virtual row index: reflected on use)
  const auto slot = [&](int32_t j) { return b.ring + static_cast<int64_t>((j - first) % taps) * n; };
  const auto fill = [&](int32_t j) { hrow(f, b, kiln_enhance_reflect101(j, b.height), slot(j)); };
  for (int32_t j = first; j < y0 + r; ++j) fill(j);
  const int16_t* rows[KILN_ENHANCE_MAX_KSIZE];
  for (int32_t y = y0; y < y1; ++y) {
    fill(y + r);
    for (int32_t k = 0; k < taps; ++k) rows[k] = slot(y - r + k);
    const uint8_t* in = b.in + y * b.in_stride;
    uint8_t* out = b.out + y * b.out_stride;
    int64_t i = 0;
#if defined(KILN_ENHANCE_BLUR_SIMD)
    i = vrow_simd(f, rows, n, in, out, b.unsharp);
#endif
    for (; i < n; i += kSpan) vrow_span(f, rows, i, n - i < kSpan ? n - i : kSpan, in, out, b.unsharp);
  }
}

}  // namespace KILN_ENHANCE_BLUR_VARIANT
}  // namespace kiln
#undef KILN_ENHANCE_BLUR_SIMD
#endif  // KILN_ENHANCE_BLUR_VARIANT
