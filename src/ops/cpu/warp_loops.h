// The warp op's common case on the CPU, included once per ISA variant: warp_cpu.cpp (generic, baseline ISA) and
// warp_avx2.cpp (-mavx2; explicit AVX2). u8 HWC images with 1-4 channels (input and output alike), a range of
// output rows at a time. The result is kiln_warp_pixel's (warp_px.h), bit for bit, in every variant: each lane
// evaluates the reference's float expressions in the reference's order (coordinates, floor, weights, the two
// horizontal lerps, the vertical lerp; no FMA: -ffp-contract=off and no -mfma) and rounds half to even like
// kiln_u8_round_even. So the difference from the scalar reference mode is 0 levels; tests/ops/warp_fast_test.cpp
// allows 1 (what a fixed-point variant, like OpenCV's 15-bit weights, could claim) and also checks it is 0 today.
//
// Both variants take blocks of output pixels (8 for AVX2, 16 generic): the source coordinates and weights in float
// lanes, each tap row's 4 bytes from the first tap (and for 3-4 channels 4 from the second) by gathers (AVX2) or
// 4-byte loads, the channels picked from those bytes, the lerps in float lanes. A block with any pixel whose taps
// are not all inside the source (or whose 4-byte reads would pass the image's last byte) goes pixel by pixel:
// inside pixels by the same float expressions, pixels all of whose taps lie outside a constant border as the
// border value (the reference's lerps of equal values round back to it), the rest by kiln_warp_pixel itself.
#ifndef KILN_OPS_CPU_WARP_LOOPS_DECL
#define KILN_OPS_CPU_WARP_LOOPS_DECL
#include <cstdint>

#include "ops/image_px.h"

namespace kiln {

// One image of a warp call, as the row loops take it.
struct WarpImageJob {
  const uint8_t* in_base = nullptr;
  KilnImageDesc in{};
  uint8_t* out_base = nullptr;
  KilnImageDesc out{};
  const float* m = nullptr;       // destination -> source 2x3 matrix
  int32_t mode = 0;               // KILN_BORDER_*
  const float* border = nullptr;  // 4 border values (WarpParams::border_value)
};

// Output rows [y_begin, y_end) of a u8 HWC image, 1-4 channels, input of the same type, layout and channels.
namespace generic {
void warp_u8_rows(const WarpImageJob& job, int32_t y_begin, int32_t y_end);
}  // namespace generic
namespace avx2 {
void warp_u8_rows(const WarpImageJob& job, int32_t y_begin, int32_t y_end);
}  // namespace avx2

}  // namespace kiln
#endif  // KILN_OPS_CPU_WARP_LOOPS_DECL

#ifdef KILN_WARP_VARIANT
#include <bit>
#include <cmath>
#include <cstring>

#include "ops/cpu/warp_scalar_math.h"
#include "ops/warp_px.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace kiln {
namespace KILN_WARP_VARIANT {
namespace {

// What every pixel of one image needs, worked out once per call.
struct Frame {
  const uint8_t* src;  // in_base + in.offset
  int32_t stride;      // in.row_stride
  int32_t x_limit;     // in.width - 1: x0 in [0, x_limit) keeps both columns inside
  int32_t y_limit;     // in.height - 1
  uint8_t border[4];   // kiln_u8_round_even of the border values (what the reference samples outside)
  bool constant;       // constant border
};

// Output pixel (x, y) alone: the reference's expressions for an inside pixel, the border value for a pixel all of
// whose taps lie outside a constant border, else kiln_warp_pixel.
template <int C>
void pixel_one(const WarpImageJob& job, const Frame& f, uint8_t* d, int32_t x, int32_t y, float row_x, float row_y) {
  const float* m = job.m;
  const auto fxd = static_cast<float>(x);
  const float sx = kiln_warp_coord_clamp((m[0] * fxd + row_x) + m[2]);
  const float sy = kiln_warp_coord_clamp((m[3] * fxd + row_y) + m[5]);
  int32_t x0;
  int32_t y0;
  const float x0f = floor_clamped(sx, &x0);
  const float y0f = floor_clamped(sy, &y0);
  if (static_cast<uint32_t>(x0) < static_cast<uint32_t>(f.x_limit) &&
      static_cast<uint32_t>(y0) < static_cast<uint32_t>(f.y_limit)) {
    const float fx = sx - x0f;
    const float fy = sy - y0f;
    const float gx = 1.0f - fx;
    const float gy = 1.0f - fy;
    const uint8_t* r0 = f.src + static_cast<int64_t>(y0) * f.stride + static_cast<int64_t>(x0) * C;
    const uint8_t* r1 = r0 + f.stride;
    for (int c = 0; c < C; ++c) {
      const float top = static_cast<float>(r0[c]) * gx + static_cast<float>(r0[C + c]) * fx;
      const float bottom = static_cast<float>(r1[c]) * gx + static_cast<float>(r1[C + c]) * fx;
      d[c] = u8_round_even(top * gy + bottom * fy);
    }
    return;
  }
  // every tap at x0 or x0 + 1 outside [0, width), or every tap row outside [0, height)
  if (f.constant && (x0 < -1 || x0 > f.x_limit || y0 < -1 || y0 > f.y_limit)) {
    for (int c = 0; c < C; ++c) d[c] = f.border[c];
    return;
  }
  const float* b = job.border;
  kiln_warp_pixel(job.in_base, job.in, job.out_base, job.out, m, job.mode, b[0], b[1], b[2], b[3], x, y);
}

#if defined(__AVX2__)
// The per-image constants of pixels_block, broadcast once (loading them per block would repeat: the stores through
// uint8_t* may alias anything).
constexpr int32_t kBlock = 8;  // pixels per pixels_block

struct Lanes {
  __m256 m0, m2, m3, m5;
  __m256i x_limit, y_limit, stride, last_off;
};

Lanes lanes_make(const float* m, const Frame& f, int32_t last_off) {
  return {_mm256_set1_ps(m[0]),        _mm256_set1_ps(m[2]),        _mm256_set1_ps(m[3]),
          _mm256_set1_ps(m[5]),        _mm256_set1_epi32(f.x_limit), _mm256_set1_epi32(f.y_limit),
          _mm256_set1_epi32(f.stride), _mm256_set1_epi32(last_off)};
}

// Output pixels x .. x + kBlock - 1 of the row whose row_x, row_y (m1 * y, m4 * y) are given; false (and nothing
// written) unless all their taps are inside and every gather stays inside the image's bytes (off1 < last_off).
template <int C>
inline bool pixels_block(const Lanes& k, const uint8_t* image, uint8_t* d, int32_t x, float row_x_value,
                         float row_y_value) {
  const __m256i xi = _mm256_add_epi32(_mm256_set1_epi32(x), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256 xs = _mm256_cvtepi32_ps(xi);  // (float)x of each pixel, like the reference
  const __m256 row_x = _mm256_set1_ps(row_x_value);
  const __m256 row_y = _mm256_set1_ps(row_y_value);
  const __m256 sx = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(k.m0, xs), row_x), k.m2);
  const __m256 sy = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(k.m3, xs), row_y), k.m5);
  // Lanes beyond +-2^30 (where the reference clamps) or NaN convert to INT32_MIN and fail the range test.
  const __m256 x0f = _mm256_floor_ps(sx);
  const __m256 y0f = _mm256_floor_ps(sy);
  const __m256i x0 = _mm256_cvttps_epi32(x0f);
  const __m256i y0 = _mm256_cvttps_epi32(y0f);
  const __m256i minus_one = _mm256_set1_epi32(-1);
  __m256i ok = _mm256_and_si256(_mm256_cmpgt_epi32(x0, minus_one), _mm256_cmpgt_epi32(k.x_limit, x0));
  ok = _mm256_and_si256(ok, _mm256_and_si256(_mm256_cmpgt_epi32(y0, minus_one), _mm256_cmpgt_epi32(k.y_limit, y0)));
  const __m256i x_bytes = C == 1 ? x0 : _mm256_mullo_epi32(x0, _mm256_set1_epi32(C));
  const __m256i off0 = _mm256_add_epi32(_mm256_mullo_epi32(y0, k.stride), x_bytes);
  const __m256i off1 = _mm256_add_epi32(off0, k.stride);
  ok = _mm256_and_si256(ok, _mm256_cmpgt_epi32(k.last_off, off1));
  if (_mm256_movemask_epi8(ok) != -1) return false;

  const auto* src = reinterpret_cast<const int*>(image);
  // a: the dword at a tap row's first tap; b: the dword at its second tap (3-4 channels; 1-2 reach it in a)
  const __m256i a0 = _mm256_i32gather_epi32(src, off0, 1);
  const __m256i a1 = _mm256_i32gather_epi32(src, off1, 1);
  __m256i b0 = a0;
  __m256i b1 = a1;
  if constexpr (C >= 3) {
    b0 = _mm256_i32gather_epi32(src, _mm256_add_epi32(off0, _mm256_set1_epi32(C)), 1);
    b1 = _mm256_i32gather_epi32(src, _mm256_add_epi32(off1, _mm256_set1_epi32(C)), 1);
  }
  const __m256 fx = _mm256_sub_ps(sx, x0f);
  const __m256 fy = _mm256_sub_ps(sy, y0f);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 gx = _mm256_sub_ps(one, fx);
  const __m256 gy = _mm256_sub_ps(one, fy);
  // byte `at` of each dword as float (one shuffle, one conversion)
  const auto channel = [](__m256i v, int at) {
    const char k = static_cast<char>(at);
    const __m256i pick = _mm256_setr_epi8(k, -1, -1, -1, k + 4, -1, -1, -1, k + 8, -1, -1, -1, k + 12, -1, -1, -1,  //
                                          k, -1, -1, -1, k + 4, -1, -1, -1, k + 8, -1, -1, -1, k + 12, -1, -1, -1);
    return _mm256_cvtepi32_ps(_mm256_shuffle_epi8(v, pick));
  };
  __m256i packed = _mm256_setzero_si256();
  for (int c = 0; c < C; ++c) {
    const int second = C >= 3 ? c : C + c;  // byte of the second tap in b (3-4 channels) or a
    const __m256 top = _mm256_add_ps(_mm256_mul_ps(channel(a0, c), gx), _mm256_mul_ps(channel(b0, second), fx));
    const __m256 bottom = _mm256_add_ps(_mm256_mul_ps(channel(a1, c), gx), _mm256_mul_ps(channel(b1, second), fx));
    const __m256 v = _mm256_add_ps(_mm256_mul_ps(top, gy), _mm256_mul_ps(bottom, fy));
    // round half to even; v lies in [0, 255 (1 + 2^-21)] (weights in [0, 1], lerps of levels <= 255 rounded
    // three times), so the result is a level without a clamp
    const __m256i level = _mm256_cvtps_epi32(v);
    packed = c == 0 ? level : _mm256_or_si256(packed, _mm256_slli_epi32(level, 8 * c));
  }
  // packed: one dword per pixel, channel c in byte c
  if constexpr (C == 4) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), packed);
  } else if constexpr (C == 3) {
    const __m256i squeeze = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,  //
                                             0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    const __m256i rgb = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(packed, squeeze),
                                                    _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm256_castsi256_si128(rgb));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d + 16), _mm256_extracti128_si256(rgb, 1));
  } else {
    const __m256i words = _mm256_permute4x64_epi64(_mm256_packus_epi32(packed, packed), 0x08);  // 8 x u16
    if constexpr (C == 2) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm256_castsi256_si128(words));
    } else {
      const __m128i w = _mm256_castsi256_si128(words);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d), _mm_packus_epi16(w, w));
    }
  }
  return true;
}
#else
// The same in plain C++, loops over the block that the compiler vectorises (all but the taps' loads): coordinates,
// weights, the lerps and the rounding (adding and subtracting 1.5 * 2^23 rounds a float in [0, 2^22) to an
// integer, half to even, in the default rounding mode).
constexpr int32_t kBlock = 16;  // pixels per pixels_block (loops long enough to stay loops for the vectoriser)

struct Lanes {
  float m0, m2, m3, m5;
  int32_t x_limit, y_limit, stride, last_off;
};

Lanes lanes_make(const float* m, const Frame& f, int32_t last_off) {
  return {m[0], m[2], m[3], m[5], f.x_limit, f.y_limit, f.stride, last_off};
}

template <int C>
inline bool pixels_block(const Lanes& k, const uint8_t* image, uint8_t* d, int32_t x, float row_x, float row_y) {
  constexpr int kN = kBlock;
  constexpr float kClamp = 1073741824.0f;  // 2^30
  float sx[kN], sy[kN], x0f[kN], y0f[kN];
  int32_t x0[kN], y0[kN], off[kN];
  int32_t inside = 1;
  // kiln_warp_coord_clamp and floor_clamped without branches (the sign of a zero floor does not reach a u8 result)
  for (int i = 0; i < kN; ++i) {
    const auto xs = static_cast<float>(x + i);
    const float u = (k.m0 * xs + row_x) + k.m2;
    const float v = (k.m3 * xs + row_y) + k.m5;
    const float u_low = u >= -kClamp ? u : -kClamp;
    const float v_low = v >= -kClamp ? v : -kClamp;
    sx[i] = u_low > kClamp ? kClamp : u_low;
    sy[i] = v_low > kClamp ? kClamp : v_low;
  }
  for (int i = 0; i < kN; ++i) {
    const auto tx = static_cast<int32_t>(sx[i]);
    const auto ty = static_cast<int32_t>(sy[i]);
    const auto tx_f = static_cast<float>(tx);
    const auto ty_f = static_cast<float>(ty);
    const int32_t x_down = tx_f > sx[i] ? 1 : 0;
    const int32_t y_down = ty_f > sy[i] ? 1 : 0;
    x0[i] = tx - x_down;
    y0[i] = ty - y_down;
    x0f[i] = tx_f - static_cast<float>(x_down);
    y0f[i] = ty_f - static_cast<float>(y_down);
    inside &= static_cast<int32_t>(x0[i] >= 0) & static_cast<int32_t>(x0[i] < k.x_limit) &
              static_cast<int32_t>(y0[i] >= 0) & static_cast<int32_t>(y0[i] < k.y_limit);
  }
  if (inside == 0) return false;
  for (int i = 0; i < kN; ++i) {
    off[i] = y0[i] * k.stride + x0[i] * C;
    inside &= static_cast<int32_t>(off[i] + k.stride < k.last_off);
  }
  if (inside == 0) return false;
  float fx[kN], fy[kN], gx[kN], gy[kN];
  for (int i = 0; i < kN; ++i) {
    fx[i] = sx[i] - x0f[i];
    fy[i] = sy[i] - y0f[i];
    gx[i] = 1.0f - fx[i];
    gy[i] = 1.0f - fy[i];
  }
  // Per tap row, a: the 4 bytes from its first tap, b: the 4 from its second (3-4 channels; 1-2 reach it in a),
  // loaded like the AVX2 gathers (so within the same bounds), bytes picked in the vectorised loop below.
  uint32_t a0[kN], a1[kN], b0[kN], b1[kN];
  for (int i = 0; i < kN; ++i) {
    const uint8_t* r0 = image + off[i];
    std::memcpy(&a0[i], r0, 4);
    std::memcpy(&a1[i], r0 + k.stride, 4);
    if constexpr (C >= 3) {
      std::memcpy(&b0[i], r0 + C, 4);
      std::memcpy(&b1[i], r0 + k.stride + C, 4);
    }
  }
  const auto byte = [](uint32_t v, int at) {
    const int shift = std::endian::native == std::endian::little ? 8 * at : 8 * (3 - at);
    return static_cast<float>(static_cast<int32_t>((v >> shift) & 0xffu));
  };
  int32_t level[C][kN];
  for (int c = 0; c < C; ++c) {
    for (int i = 0; i < kN; ++i) {
      const float p01 = C >= 3 ? byte(b0[i], c) : byte(a0[i], C + c);
      const float p11 = C >= 3 ? byte(b1[i], c) : byte(a1[i], C + c);
      const float top = byte(a0[i], c) * gx[i] + p01 * fx[i];
      const float bottom = byte(a1[i], c) * gx[i] + p11 * fx[i];
      const float v = top * gy[i] + bottom * fy[i];  // in [0, 255 (1 + 2^-21)]: see the AVX2 loop
      level[c][i] = static_cast<int32_t>((v + 12582912.0f) - 12582912.0f);
    }
  }
  for (int i = 0; i < kN; ++i) {
    for (int c = 0; c < C; ++c) d[i * C + c] = static_cast<uint8_t>(level[c][i]);
  }
  return true;
}
#endif

template <int C>
void rows(const WarpImageJob& job, int32_t y_begin, int32_t y_end) {
  Frame f{};
  f.src = job.in_base + job.in.offset;
  f.stride = job.in.row_stride;
  f.x_limit = job.in.width - 1;
  f.y_limit = job.in.height - 1;
  f.constant = job.mode == KILN_BORDER_CONSTANT;
  for (int c = 0; c < 4; ++c) f.border[c] = kiln_u8_round_even(job.border[c]);
  // Offsets are int32: the image's bytes must stay below 2^31 (else every block goes pixel by pixel). Blocks read
  // 4 bytes at each tap row's first tap (and, for 3-4 channels, at its second): off1 (the lower row's first byte)
  // must stay below last_off for them to end inside the image.
  const int64_t image_bytes =
      static_cast<int64_t>(job.in.height - 1) * job.in.row_stride + static_cast<int64_t>(job.in.width) * C;
  const bool blocks = image_bytes + 2 * C + 8 < INT32_MAX;
  const auto last_off = static_cast<int32_t>(image_bytes - (C >= 3 ? C + 4 : 4) + 1);
  const Lanes lanes = lanes_make(job.m, f, last_off);
  const uint8_t* src = f.src;
  const float m1 = job.m[1];
  const float m4 = job.m[4];
  const int32_t width = job.out.width;
  for (int32_t y = y_begin; y < y_end; ++y) {
    const auto fyd = static_cast<float>(y);
    const float row_x = m1 * fyd;
    const float row_y = m4 * fyd;
    uint8_t* dst = job.out_base + job.out.offset + static_cast<int64_t>(y) * job.out.row_stride;
    int32_t x = 0;
    if (blocks) {
      for (; x + kBlock <= width; x += kBlock) {
        uint8_t* d = dst + static_cast<int64_t>(x) * C;
        if (pixels_block<C>(lanes, src, d, x, row_x, row_y)) continue;
        for (int32_t k = 0; k < kBlock; ++k) pixel_one<C>(job, f, d + k * C, x + k, y, row_x, row_y);
      }
      // the tail as the row's last block, overlapping pixels already written (with the same values)
      if (x < width && width >= kBlock) {
        const int32_t last = width - kBlock;
        if (pixels_block<C>(lanes, src, dst + static_cast<int64_t>(last) * C, last, row_x, row_y)) x = width;
      }
    }
    for (; x < width; ++x) pixel_one<C>(job, f, dst + static_cast<int64_t>(x) * C, x, y, row_x, row_y);
  }
}

}  // namespace

void warp_u8_rows(const WarpImageJob& job, int32_t y_begin, int32_t y_end) {
  switch (job.in.channels) {
    case 1: rows<1>(job, y_begin, y_end); break;
    case 2: rows<2>(job, y_begin, y_end); break;
    case 3: rows<3>(job, y_begin, y_end); break;
    case 4: rows<4>(job, y_begin, y_end); break;
    default: break;
  }
}

}  // namespace KILN_WARP_VARIANT
}  // namespace kiln
#endif  // KILN_WARP_VARIANT
