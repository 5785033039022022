// The color family on the CPU: rows of every image of the batch spread over the pool, each pixel through
// color_px.h (the reference for the GPU backends), except RGB/BGR -> gray on u8 and f32 HWC images, which run as
// plain loops specialised on the channel count and order (the same integer math as kiln_gray_u8, the same
// float expression as kiln_color_gray_f), compiled twice on x86-64 (AVX2 and baseline) and picked at run time, and
// NV12 -> RGB into HWC images, a row loop with kiln_nv12_rgb's integer math.
#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "core/cpu_isa.h"
#include "ops/color.h"
#include "ops/color_px.h"

#if defined(__GNUC__) && defined(__x86_64__)
#define KILN_COLOR_AVX2 1
#include <immintrin.h>
#endif

namespace kiln {

namespace {

// Runs row_fn(image, y) for every row of every image of `batch`, rows spread over `pool` (nullptr: this thread).
template <typename RowFn>
void rows_for_each(const VarShapeBatchView& batch, ThreadPool* pool, const RowFn& row_fn) {
  std::vector<int64_t> first_row(static_cast<size_t>(batch.count) + 1, 0);
  for (int64_t i = 0; i < batch.count; ++i) first_row[static_cast<size_t>(i) + 1] = first_row[static_cast<size_t>(i)] + batch[i].height;
  const int64_t rows = first_row.back();
  auto run = [&](int64_t begin, int64_t end) {
    int64_t image = 0;
    while (first_row[static_cast<size_t>(image) + 1] <= begin) ++image;
    for (int64_t r = begin; r < end; ++r) {
      while (first_row[static_cast<size_t>(image) + 1] <= r) ++image;
      row_fn(image, static_cast<int32_t>(r - first_row[static_cast<size_t>(image)]));
    }
  };
  parallel_for(pool, rows, run);
}

// One row of u8 gray: CN channels per input pixel, red at R (0 or 2), blue at 2 - R.
template <int CN, int R>
inline void gray_u8_row_impl(const uint8_t* __restrict src, uint8_t* __restrict dst, int32_t width) {
  for (int32_t x = 0; x < width; ++x) {
    const uint8_t* p = src + static_cast<int64_t>(x) * CN;
    dst[x] = static_cast<uint8_t>((static_cast<int32_t>(p[R]) * KILN_GRAY_U8_R +
                                   static_cast<int32_t>(p[1]) * KILN_GRAY_U8_G +
                                   static_cast<int32_t>(p[2 - R]) * KILN_GRAY_U8_B + (1 << 14)) >>
                                  15);
  }
}

// One row of float gray: kiln_color_gray_f(c0, c1, c2, w0, 0.587, w2), channel 0 first.
template <int CN>
inline void gray_f32_row_impl(const float* __restrict src, float* __restrict dst, int32_t width, float w0,
                              float w2) {
  for (int32_t x = 0; x < width; ++x) {
    const float* p = src + static_cast<int64_t>(x) * CN;
    const float a = p[0] * w0;
    const float b = p[1] * 0.587f;
    const float c = p[2] * w2;
    dst[x] = (a + b) + c;
  }
}

// One row of NV12 -> u8 RGB HWC (an even width): kiln_nv12_rgb's arithmetic, each pixel pair's chroma terms once.
void nv12_rgb_row(const uint8_t* __restrict luma, const uint8_t* __restrict chroma, uint8_t* __restrict dst,
                  int32_t width, const KilnYuvConsts& k) {
  for (int32_t x = 0; x < width; x += 2) {
    const int32_t u = static_cast<int32_t>(chroma[x]) - 128;
    const int32_t v = static_cast<int32_t>(chroma[x + 1]) - 128;
    const int32_t r = k.cvr * v, g = k.cug * u + k.cvg * v, b = k.cub * u;
    for (int32_t dx = 0; dx < 2; ++dx) {
      const int32_t l = static_cast<int32_t>(luma[x + dx]) - k.y_offset;
      const int32_t yy = (l > 0 ? l : 0) * k.cy;
      uint8_t* p = dst + static_cast<int64_t>(x + dx) * 3;
      p[0] = kiln_yuv_level(yy + r);
      p[1] = kiln_yuv_level(yy + g);
      p[2] = kiln_yuv_level(yy + b);
    }
  }
}

using GrayU8Fn = void (*)(const uint8_t*, uint8_t*, int32_t);
using GrayF32Fn = void (*)(const float*, float*, int32_t, float, float);

template <int CN, int R>
void gray_u8_row(const uint8_t* src, uint8_t* dst, int32_t width) {
  gray_u8_row_impl<CN, R>(src, dst, width);
}
template <int CN>
void gray_f32_row(const float* src, float* dst, int32_t width, float w0, float w2) {
  gray_f32_row_impl<CN>(src, dst, width, w0, w2);
}

#ifdef KILN_COLOR_AVX2
// Packed 3-channel rows, 16 pixels a step: each 128-bit lane takes 4 pixels, shuffled into 16-bit (red, green) and
// (blue, 0) pairs that one multiply-add each (pmaddwd) weighs with the same 15-bit integers as kiln_gray_u8; the
// sums, rounded and shifted, are packed back to bytes. Every load stays within the 48 bytes of its 16 pixels.

// The pshufb control of one lane: 4 pixels from byte `first` on, each as the 16-bit pair (channel a, channel b),
// channel b < 0 giving 0.
__m128i gray_shuffle_control(int32_t first, int32_t channel_a, int32_t channel_b) {
  alignas(16) int8_t c[16];
  for (int32_t k = 0; k < 4; ++k) {
    const int32_t at = first + 3 * k;
    c[4 * k] = static_cast<int8_t>(at + channel_a);
    c[4 * k + 1] = -1;
    c[4 * k + 2] = static_cast<int8_t>(channel_b < 0 ? -1 : at + channel_b);
    c[4 * k + 3] = -1;
  }
  return _mm_load_si128(reinterpret_cast<const __m128i*>(c));
}

struct GrayRgbConstants {
  __m256i rg, bz, w_rg, w_b, half;
};

// 8 pixels at p -> their 8 gray levels as int32 (lane 0: pixels 0..3, lane 1: 4..7). Lane 0 holds bytes 0..15
// (pixels 0..3 at 0, 3, 6, 9), lane 1 bytes 8..23 (pixels 4..7 at 4, 7, 10, 13).
__attribute__((target("avx2"))) inline __m256i gray_rgb_eight(const uint8_t* p, const GrayRgbConstants& k) {
  const __m256i v = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(p + 8), reinterpret_cast<const __m128i*>(p));
  const __m256i sum = _mm256_add_epi32(_mm256_madd_epi16(_mm256_shuffle_epi8(v, k.rg), k.w_rg),
                                       _mm256_madd_epi16(_mm256_shuffle_epi8(v, k.bz), k.w_b));
  return _mm256_srli_epi32(_mm256_add_epi32(sum, k.half), 15);
}

// Red at +R, green at +1, blue at +(2 - R) of each pixel.
template <int R>
__attribute__((target("avx2"))) void gray_u8_rgb_row_avx2(const uint8_t* src, uint8_t* dst, int32_t width) {
  GrayRgbConstants k;
  k.rg = _mm256_set_m128i(gray_shuffle_control(4, R, 1), gray_shuffle_control(0, R, 1));
  k.bz = _mm256_set_m128i(gray_shuffle_control(4, 2 - R, -1), gray_shuffle_control(0, 2 - R, -1));
  k.w_rg = _mm256_set1_epi32(KILN_GRAY_U8_R | (KILN_GRAY_U8_G << 16));
  k.w_b = _mm256_set1_epi32(KILN_GRAY_U8_B);
  k.half = _mm256_set1_epi32(1 << 14);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0);
  int32_t x = 0;
  for (; x + 16 <= width; x += 16) {
    const uint8_t* p = src + static_cast<int64_t>(x) * 3;
    const __m256i words = _mm256_packs_epi32(gray_rgb_eight(p, k), gray_rgb_eight(p + 24, k));  // 0-3 8-11 | 4-7 12-15
    const __m256i bytes = _mm256_packus_epi16(words, words);  // the same as bytes, twice per lane
    const __m256i ordered = _mm256_permutevar8x32_epi32(bytes, order);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + x), _mm256_castsi256_si128(ordered));
  }
  gray_u8_row_impl<3, R>(src + static_cast<int64_t>(x) * 3, dst + x, width - x);
}

template <int CN, int R>
__attribute__((target("avx2"))) void gray_u8_row_avx2(const uint8_t* src, uint8_t* dst, int32_t width) {
  if constexpr (CN == 3) {
    gray_u8_rgb_row_avx2<R>(src, dst, width);
  } else {
    gray_u8_row_impl<CN, R>(src, dst, width);
  }
}
template <int CN>
__attribute__((target("avx2"))) void gray_f32_row_avx2(const float* src, float* dst, int32_t width, float w0,
                                                        float w2) {
  gray_f32_row_impl<CN>(src, dst, width, w0, w2);
}

// The render ops' ISA choice (KILN_CPU_ISA=scalar|generic forces the plain loops).
bool have_avx2() { return cpu_isa_active() == CpuIsa::kAvx2; }
#endif

template <int CN, int R>
GrayU8Fn pick_gray_u8_order() {
#ifdef KILN_COLOR_AVX2
  if (have_avx2()) return &gray_u8_row_avx2<CN, R>;
#endif
  return &gray_u8_row<CN, R>;
}

template <int CN>
GrayF32Fn pick_gray_f32_cn() {
#ifdef KILN_COLOR_AVX2
  if (have_avx2()) return &gray_f32_row_avx2<CN>;
#endif
  return &gray_f32_row<CN>;
}

GrayU8Fn pick_gray_u8(int32_t channels, bool rgb) {
  if (channels == 3) return rgb ? pick_gray_u8_order<3, 0>() : pick_gray_u8_order<3, 2>();
  if (channels == 4) return rgb ? pick_gray_u8_order<4, 0>() : pick_gray_u8_order<4, 2>();
  return nullptr;
}

GrayF32Fn pick_gray_f32(int32_t channels) {
  if (channels == 3) return pick_gray_f32_cn<3>();
  if (channels == 4) return pick_gray_f32_cn<4>();
  return nullptr;
}

}  // namespace

Status color_cpu(const OpCall& call, ThreadPool* pool) {
  const auto& params = *static_cast<const ColorParams*>(call.params);
  const auto conversion = static_cast<int32_t>(params.conversion);
  const bool gray = conversion == KILN_COLOR_RGB_TO_GRAY || conversion == KILN_COLOR_BGR_TO_GRAY;
  const bool rgb = conversion == KILN_COLOR_RGB_TO_GRAY;
  std::vector<KilnImageDesc> in_descs;
  std::vector<KilnImageDesc> out_descs;
  std::vector<GrayU8Fn> gray_u8;
  std::vector<GrayF32Fn> gray_f32;
  std::vector<bool> nv12_rows;  // NV12 -> RGB into an HWC image: nv12_rgb_row
  for (int64_t i = 0; i < call.in.count; ++i) {
    const KilnImageDesc in = image_desc(call.in[i]);
    const KilnImageDesc out = image_desc(call.out[i]);
    in_descs.push_back(in);
    out_descs.push_back(out);
    const bool hwc = gray && in.layout == KILN_LAYOUT_HWC && out.layout == KILN_LAYOUT_HWC && in.type == out.type;
    gray_u8.push_back(hwc && in.type == KILN_PIXEL_U8 ? pick_gray_u8(in.channels, rgb) : nullptr);
    gray_f32.push_back(hwc && in.type == KILN_PIXEL_F32 ? pick_gray_f32(in.channels) : nullptr);
    nv12_rows.push_back(conversion == KILN_COLOR_NV12_TO_RGB && out.layout == KILN_LAYOUT_HWC);
  }
  const float w0 = rgb ? 0.299f : 0.114f;
  const float w2 = rgb ? 0.114f : 0.299f;
  const KilnYuvConsts yuv = color_yuv_consts(params);
  rows_for_each(call.out, pool, [&](int64_t image, int32_t y) {
    const auto i = static_cast<size_t>(image);
    const KilnImageDesc& in = in_descs[i];
    const KilnImageDesc& out = out_descs[i];
    const auto* in_base = static_cast<const uint8_t*>(call.in[image].data);
    auto* out_base = static_cast<uint8_t*>(call.out[image].data);
    if (gray_u8[i] != nullptr || gray_f32[i] != nullptr) {  // same sizes: row y of the input exists
      const uint8_t* src = in_base + in.offset + static_cast<int64_t>(y) * in.row_stride;
      uint8_t* dst = out_base + out.offset + static_cast<int64_t>(y) * out.row_stride;
      if (gray_u8[i] != nullptr) {
        gray_u8[i](src, dst, in.width);
      } else {
        gray_f32[i](reinterpret_cast<const float*>(src), reinterpret_cast<float*>(dst), in.width, w0, w2);
      }
      return;
    }
    if (nv12_rows[i]) {
      const int32_t chroma_row = (yuv.chroma_row > 0 ? yuv.chroma_row : out.height) + y / 2;
      nv12_rgb_row(in_base + in.offset + static_cast<int64_t>(y) * in.row_stride,
                   in_base + in.offset + static_cast<int64_t>(chroma_row) * in.row_stride,
                   out_base + out.offset + static_cast<int64_t>(y) * out.row_stride, out.width, yuv);
      return;
    }
    for (int32_t x = 0; x < out.width; ++x) kiln_color_pixel(in_base, in, out_base, out, conversion, yuv, x, y);
  });
  return Status::ok();
}

}  // namespace kiln
