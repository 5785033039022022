// The arithmetic is libwebp 1.2.4's, written again for 32 chroma samples (64 pixels) a step:
// - the chroma upsampling of src/dsp/upsampling.c (UPSAMPLE_FUNC, u and v alike): in a row whose nearer chroma row
//   is N and farther one F, pixel 2j+1 is (((N[j] + N[j+1] + F[j] + F[j+1] + 8 + 2 (N[j+1] + F[j])) >> 3) + N[j]) >> 1
//   and pixel 2j the same with j-1 in place of j+1; samples past a row's ends repeat its edge ones, which gives
//   libwebp's edge pixels, (3 N + F + 2) >> 2, exactly;
// - the rows of src/dec/io_dec.c (EmitFancyRGB): the first row upsamples chroma row 0 with itself, rows 2k-1 and 2k
//   share chroma rows k-1 and k (nearer to the first, to the second), and an even height's last row upsamples the
//   last chroma row with itself;
// - the YUV to RGB of src/dsp/yuv.h (VP8YUVToR/G/B): MultHi(v, c) = (v c) >> 8 is _mm512_mulhi_epu16 of v << 8, and
//   the sums clip as VP8Clip8 does (below 0: 0; over 16383: 255; else >> 6) through unsigned saturation and packus.
// The functions carry their target attribute; the file is built for the baseline ISA.
#include "io/webp_yuv_rgb_avx512.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>

namespace kiln {

namespace {

constexpr size_t kWebpYuvPlaneSlack = 64;

}  // namespace

bool webp_yuv_rgb_avx512_supported() {
#if defined(__x86_64__)
  static const bool supported = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("bmi2");
  return supported;
#else
  return false;
#endif
}

WebpYuvPlanes webp_yuv_planes(std::vector<uint8_t>& storage, int width, int height) {
  const size_t chroma_width = (static_cast<size_t>(width) + 1) / 2;
  const size_t chroma_height = (static_cast<size_t>(height) + 1) / 2;
  WebpYuvPlanes planes;
  planes.y_stride = width;
  planes.uv_stride = static_cast<int>(chroma_width + 2);
  planes.y_size = static_cast<size_t>(width) * height;
  planes.uv_size = (chroma_height - 1) * planes.uv_stride + chroma_width;
  const size_t chroma_plane = chroma_height * planes.uv_stride + kWebpYuvPlaneSlack;
  const size_t total = planes.y_size + kWebpYuvPlaneSlack + 2 * chroma_plane;
  if (storage.size() < total) storage.resize(total);
  planes.y = storage.data();
  planes.u = planes.y + planes.y_size + kWebpYuvPlaneSlack + 1;  // each chroma row's free byte before it
  planes.v = planes.u + chroma_plane;
  return planes;
}

#if defined(__x86_64__)

namespace {

#define KILN_WEBP_AVX512 __attribute__((target("avx512f,avx512bw,avx512vbmi,bmi2")))

// Where packus_epi16(even, odd) puts pixel p of 64 (p = 2i from `even`, 2i + 1 from `odd`): each 128-bit lane holds
// eight of `even`, then eight of `odd`.
constexpr int webp_rgb_packed_position(int p) { return 16 * ((p >> 1) >> 3) + ((p >> 1) & 7) + 8 * (p & 1); }

// The byte shuffles from packed R, G and B (64 pixels each) to 192 bytes of RGB: for each output vector, the indices
// into R:G (permutex2var) and those into B (its bytes under b_mask).
struct WebpRgbShuffle {
  alignas(64) uint8_t rg[3][64];
  alignas(64) uint8_t b[3][64];
  uint64_t b_mask[3];
};

constexpr WebpRgbShuffle webp_rgb_shuffle() {
  WebpRgbShuffle s{};
  for (int t = 0; t < 192; ++t) {
    const int vector = t / 64, byte = t % 64, channel = t % 3;
    const int position = webp_rgb_packed_position(t / 3);
    if (channel == 2) {
      s.b[vector][byte] = static_cast<uint8_t>(position);
      s.b_mask[vector] |= uint64_t{1} << byte;
    } else {
      s.rg[vector][byte] = static_cast<uint8_t>(position + 64 * channel);
    }
  }
  return s;
}

alignas(64) constexpr WebpRgbShuffle kWebpRgbShuffle = webp_rgb_shuffle();

KILN_WEBP_AVX512 inline __m512i webp_chroma_widen(const uint8_t* p) {
  return _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// (((sum + 2 diagonal) >> 3) + nearest) >> 1, shifted left by 8 for mulhi.
KILN_WEBP_AVX512 inline __m512i webp_fancy(__m512i sum, __m512i diagonal, __m512i nearest) {
  const __m512i d = _mm512_srli_epi16(_mm512_add_epi16(sum, _mm512_slli_epi16(diagonal, 1)), 3);
  return _mm512_slli_epi16(_mm512_srli_epi16(_mm512_add_epi16(d, nearest), 1), 8);
}

// One chroma plane upsampled at 64 pixels (the even and the odd ones) of the row nearer `top` and, with kBottom, of
// the row nearer `cur`; both point at sample j of their chroma rows.
struct WebpUpsampled {
  __m512i top_even, top_odd, bottom_even, bottom_odd;
};

template <bool kBottom>
KILN_WEBP_AVX512 inline WebpUpsampled webp_chroma_upsample(const uint8_t* top, const uint8_t* cur) {
  const __m512i t_l = webp_chroma_widen(top - 1), t_c = webp_chroma_widen(top), t_r = webp_chroma_widen(top + 1);
  const __m512i c_l = webp_chroma_widen(cur - 1), c_c = webp_chroma_widen(cur), c_r = webp_chroma_widen(cur + 1);
  const __m512i center = _mm512_add_epi16(_mm512_add_epi16(t_c, c_c), _mm512_set1_epi16(8));
  const __m512i even = _mm512_add_epi16(_mm512_add_epi16(t_l, c_l), center);
  const __m512i odd = _mm512_add_epi16(_mm512_add_epi16(t_r, c_r), center);
  WebpUpsampled out;
  out.top_even = webp_fancy(even, _mm512_add_epi16(t_l, c_c), t_c);
  out.top_odd = webp_fancy(odd, _mm512_add_epi16(t_r, c_c), t_c);
  if constexpr (kBottom) {
    out.bottom_even = webp_fancy(even, _mm512_add_epi16(c_l, t_c), c_c);
    out.bottom_odd = webp_fancy(odd, _mm512_add_epi16(c_r, t_c), c_c);
  }
  return out;
}

// VP8YUVToR/G/B of 32 pixels (inputs shifted left by 8), before the saturating pack.
KILN_WEBP_AVX512 inline void webp_yuv_to_rgb_lanes(__m512i y, __m512i u, __m512i v, __m512i& r, __m512i& g,
                                                   __m512i& b) {
  const __m512i luma = _mm512_mulhi_epu16(y, _mm512_set1_epi16(19077));
  const __m512i r_sum = _mm512_add_epi16(luma, _mm512_mulhi_epu16(v, _mm512_set1_epi16(26149)));
  r = _mm512_srli_epi16(_mm512_subs_epu16(r_sum, _mm512_set1_epi16(14234)), 6);
  const __m512i g_minus =
      _mm512_add_epi16(_mm512_mulhi_epu16(u, _mm512_set1_epi16(6419)), _mm512_mulhi_epu16(v, _mm512_set1_epi16(13320)));
  g = _mm512_srli_epi16(_mm512_subs_epu16(_mm512_add_epi16(luma, _mm512_set1_epi16(8708)), g_minus), 6);
  const __m512i b_sum = _mm512_add_epi16(luma, _mm512_mulhi_epu16(u, _mm512_set1_epi16(static_cast<int16_t>(33050))));
  b = _mm512_srli_epi16(_mm512_subs_epu16(b_sum, _mm512_set1_epi16(17685)), 6);
}

// `pixels` (1 to 64) RGB pixels at dst from 64 luma bytes and their chroma.
KILN_WEBP_AVX512 inline void webp_rgb_store(const uint8_t* luma, __m512i u_even, __m512i u_odd, __m512i v_even,
                                            __m512i v_odd, uint8_t* dst, int pixels) {
  const __m512i y = _mm512_loadu_si512(luma);
  __m512i r_even, g_even, b_even, r_odd, g_odd, b_odd;
  webp_yuv_to_rgb_lanes(_mm512_slli_epi16(y, 8), u_even, v_even, r_even, g_even, b_even);
  webp_yuv_to_rgb_lanes(_mm512_and_si512(y, _mm512_set1_epi16(static_cast<int16_t>(0xFF00))), u_odd, v_odd, r_odd,
                        g_odd, b_odd);
  const __m512i r = _mm512_packus_epi16(r_even, r_odd);
  const __m512i g = _mm512_packus_epi16(g_even, g_odd);
  const __m512i b = _mm512_packus_epi16(b_even, b_odd);
  const auto bytes = static_cast<unsigned>(3 * pixels);
  for (unsigned vector = 0; vector < 3; ++vector) {
    const __m512i rg = _mm512_permutex2var_epi8(r, _mm512_load_si512(kWebpRgbShuffle.rg[vector]), g);
    const __m512i rgb = _mm512_mask_permutexvar_epi8(rg, kWebpRgbShuffle.b_mask[vector],
                                                     _mm512_load_si512(kWebpRgbShuffle.b[vector]), b);
    if (pixels == 64) {
      _mm512_storeu_si512(dst + 64 * vector, rgb);
    } else if (bytes > 64 * vector) {
      _mm512_mask_storeu_epi8(dst + 64 * vector, _bzhi_u64(~uint64_t{0}, bytes - 64 * vector), rgb);
    }
  }
}

// libwebp's UPSAMPLE_FUNC for a pair of rows (kBottom) or for one row.
template <bool kBottom>
KILN_WEBP_AVX512 void webp_fancy_rows(const uint8_t* top_y, const uint8_t* bottom_y, const uint8_t* top_u,
                                      const uint8_t* top_v, const uint8_t* cur_u, const uint8_t* cur_v,
                                      uint8_t* top_dst, uint8_t* bottom_dst, int width) {
  const int chroma_width = (width + 1) / 2;
  for (int j = 0; j < chroma_width; j += 32) {
    const int x = 2 * j;
    const int pixels = std::min(64, width - x);
    const WebpUpsampled u = webp_chroma_upsample<kBottom>(top_u + j, cur_u + j);
    const WebpUpsampled v = webp_chroma_upsample<kBottom>(top_v + j, cur_v + j);
    webp_rgb_store(top_y + x, u.top_even, u.top_odd, v.top_even, v.top_odd, top_dst + 3 * x, pixels);
    if constexpr (kBottom) {
      webp_rgb_store(bottom_y + x, u.bottom_even, u.bottom_odd, v.bottom_even, v.bottom_odd, bottom_dst + 3 * x,
                     pixels);
    }
  }
}

#undef KILN_WEBP_AVX512

}  // namespace

void webp_yuv_to_rgb_avx512(const WebpYuvPlanes& planes, int width, int height, uint8_t* rgb, size_t rgb_stride) {
  const int chroma_width = (width + 1) / 2;
  const int chroma_height = (height + 1) / 2;
  for (int row = 0; row < chroma_height; ++row) {
    for (uint8_t* plane : {planes.u, planes.v}) {
      uint8_t* samples = plane + static_cast<size_t>(row) * planes.uv_stride;
      samples[-1] = samples[0];
      samples[chroma_width] = samples[chroma_width - 1];
    }
  }
  const auto y_row = [&](int row) { return planes.y + static_cast<size_t>(row) * planes.y_stride; };
  const auto u_row = [&](int row) { return planes.u + static_cast<size_t>(row) * planes.uv_stride; };
  const auto v_row = [&](int row) { return planes.v + static_cast<size_t>(row) * planes.uv_stride; };
  const auto rgb_row = [&](int row) { return rgb + static_cast<size_t>(row) * rgb_stride; };
  webp_fancy_rows<false>(y_row(0), nullptr, u_row(0), v_row(0), u_row(0), v_row(0), rgb_row(0), nullptr, width);
  for (int k = 1; 2 * k < height; ++k) {
    webp_fancy_rows<true>(y_row(2 * k - 1), y_row(2 * k), u_row(k - 1), v_row(k - 1), u_row(k), v_row(k),
                          rgb_row(2 * k - 1), rgb_row(2 * k), width);
  }
  if (height % 2 == 0) {
    const int last = chroma_height - 1;
    webp_fancy_rows<false>(y_row(height - 1), nullptr, u_row(last), v_row(last), u_row(last), v_row(last),
                           rgb_row(height - 1), nullptr, width);
  }
}

#else

void webp_yuv_to_rgb_avx512(const WebpYuvPlanes&, int, int, uint8_t*, size_t) {}

#endif

}  // namespace kiln
