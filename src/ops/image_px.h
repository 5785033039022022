/* Pixel access shared by every image-op family and backend (C subset; see kernel_defs.h).
 *
 * KilnImageDesc describes one image of a var-shape batch inside one buffer: `offset` bytes from the buffer base,
 * rows `row_stride` bytes apart, channel planes `plane_stride` bytes apart (CHW; 0 for HWC). Loads convert to
 * float; stores round half away from zero and saturate for u8, and round to nearest even for f16, with the same
 * integer operations on every backend (no vstore_half, no __float2half). */
#ifndef KILN_OPS_IMAGE_PX_H
#define KILN_OPS_IMAGE_PX_H

#include "ops/kernel_defs.h"

#define KILN_PIXEL_U8 0
#define KILN_PIXEL_F32 1
#define KILN_PIXEL_F16 2
#define KILN_LAYOUT_HWC 0
#define KILN_LAYOUT_CHW 1

typedef struct KilnImageDesc {
  int64_t offset;
  int64_t plane_stride;
  int32_t width;
  int32_t height;
  int32_t channels;
  int32_t row_stride;
  int32_t type;   /* KILN_PIXEL_* */
  int32_t layout; /* KILN_LAYOUT_* */
} KilnImageDesc;

/* OpenCV 4's u8 RGB -> gray: 15-bit fixed point weights round((0.299, 0.587, 0.114) * 2^15), summing to 2^15,
 * rounded; bit-exact with cv::cvtColor (the result is at most 255). The only place these weights are written. */
#define KILN_GRAY_U8_R 9798
#define KILN_GRAY_U8_G 19235
#define KILN_GRAY_U8_B 3735
KILN_KERNEL_FN int32_t kiln_gray_u8(int32_t r, int32_t g, int32_t b) {
  return (r * KILN_GRAY_U8_R + g * KILN_GRAY_U8_G + b * KILN_GRAY_U8_B + (1 << 14)) >> 15;
}

/* IEEE binary16 bits -> float (exact). */
KILN_KERNEL_FN float kiln_half_to_float(uint32_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return kiln_bits_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0u) {
    /* subnormal or zero: mantissa * 2^-24 (exact in float) */
    const float magnitude = (float)mantissa * 5.9604644775390625e-8f;
    return sign != 0u ? -magnitude : magnitude;
  }
  return kiln_bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/* float -> IEEE binary16 bits, round to nearest even, overflow to infinity, NaN kept quiet. */
KILN_KERNEL_FN uint32_t kiln_float_to_half(float f) {
  const uint32_t bits = kiln_float_bits(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits >= 0x7f800000u) return sign | 0x7c00u | (abs_bits > 0x7f800000u ? 0x200u : 0u);
  if (abs_bits >= 0x477ff000u) return sign | 0x7c00u; /* rounds to >= 65520: infinity */
  if (abs_bits < 0x38800000u) {
    /* below the smallest normal half: subnormal, rounded to nearest even at 2^-24 */
    if (abs_bits < 0x33000000u) return sign; /* < 2^-25: zero */
    const uint32_t exponent = abs_bits >> 23;
    const uint32_t mantissa = (abs_bits & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exponent; /* 14..24 */
    uint32_t bits16 = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (bits16 & 1u) != 0u)) bits16 += 1u;
    return sign | bits16;
  }
  uint32_t bits16 = ((abs_bits - 0x38000000u) >> 13);
  const uint32_t rest = abs_bits & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (bits16 & 1u) != 0u)) bits16 += 1u;
  return sign | bits16;
}

/* Saturating u8 from float: NaN -> 0, round half away from zero (OpenCV's saturate_cast rounds half to even;
 * families that must match OpenCV bit for bit use kiln_u8_round_even). */
KILN_KERNEL_FN uint8_t kiln_u8_from_float(float v) {
  if (!(v > 0.0f)) return 0;
  if (v >= 255.0f) return 255;
  return (uint8_t)(int32_t)(v + 0.5f);
}

/* Saturating u8 from float with round half to even (cvRound / saturate_cast<uchar>). */
KILN_KERNEL_FN uint8_t kiln_u8_round_even(float v) {
  if (!(v > 0.0f)) return 0;
  if (v >= 255.0f) return 255;
  const float floor_v = kiln_floorf(v);
  const float frac = v - floor_v;
  int32_t r = (int32_t)floor_v;
  if (frac > 0.5f || (frac == 0.5f && (r & 1) != 0)) r += 1;
  return (uint8_t)r;
}

/* exp(x) for softmax sums and sigmoids, deterministic on every backend: Cody-Waite range reduction x = n ln2 + r,
 * Cephes' degree-6 polynomial for exp(r) (|error| ~ 1-2 ulp), scaled by 2^n through the exponent bits.
 * x < -87: 0 (the result would be subnormal; in the softmax sum it is added to 1 and has no effect);
 * x > 88.72: +inf. NaN -> NaN. */
KILN_KERNEL_FN float kiln_expf(float x) {
  if (x != x) return x;
  if (x > 88.72283935546875f) return kiln_bits_float(0x7f800000u);
  if (x < -87.0f) return 0.0f;
  const float n = kiln_floorf(x * 1.44269504088896341f + 0.5f);
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  const float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * z;
  y = y + r;
  y = y + 1.0f;
  /* n in [-126, 128]; y in about [0.7, 1.42]: scale in two exact steps so 2^n never leaves the normal range */
  const int32_t ni = (int32_t)n;
  const int32_t n1 = ni / 2;
  const int32_t n2 = ni - n1;
  y = y * kiln_bits_float((uint32_t)(n1 + 127) << 23);
  y = y * kiln_bits_float((uint32_t)(n2 + 127) << 23);
  return y;
}

/* log2(x) for normal x > 0, deterministic on every backend: x = m 2^e with m in [sqrt(1/2), sqrt(2)),
 * ln(m) = 2 atanh(t), t = (m - 1) / (m + 1), |t| <= 0.1716, by its series to t^9 (|error| ~ 1e-7). */
KILN_KERNEL_FN float kiln_log2f(float x) {
  const uint32_t b = kiln_float_bits(x);
  int32_t e = (int32_t)((b >> 23) & 255u) - 127;
  float m = kiln_bits_float((b & 0x007fffffu) | 0x3f800000u);
  if (m > 1.41421356f) {
    m = m * 0.5f;
    e = e + 1;
  }
  const float t = (m - 1.0f) / (m + 1.0f);
  const float t2 = t * t;
  float s = 0.111111111f;
  s = s * t2 + 0.142857143f;
  s = s * t2 + 0.2f;
  s = s * t2 + 0.333333333f;
  s = s * t2 + 1.0f;
  return (float)e + (2.0f * t * s) * 1.44269504f;
}

KILN_KERNEL_FN int64_t kiln_px_offset(KilnImageDesc d, int32_t x, int32_t y, int32_t c) {
  const int32_t size = d.type == KILN_PIXEL_U8 ? 1 : (d.type == KILN_PIXEL_F16 ? 2 : 4);
  if (d.layout == KILN_LAYOUT_HWC) {
    return d.offset + (int64_t)y * d.row_stride + ((int64_t)x * d.channels + c) * size;
  }
  return d.offset + (int64_t)c * d.plane_stride + (int64_t)y * d.row_stride + (int64_t)x * size;
}

/* The value of channel c of pixel (x, y), as float (u8 levels 0-255, not scaled). */
KILN_KERNEL_FN float kiln_px_load(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t x, int32_t y,
                                  int32_t c) {
  const int64_t at = kiln_px_offset(d, x, y, c);
  if (d.type == KILN_PIXEL_U8) return (float)base[at];
  if (d.type == KILN_PIXEL_F16) return kiln_half_to_float(*(KILN_GLOBAL const uint16_t*)(base + at));
  return *(KILN_GLOBAL const float*)(base + at);
}

/* Stores v into channel c of pixel (x, y): u8 saturated (round half away from zero), f16 round to nearest even. */
KILN_KERNEL_FN void kiln_px_store(KILN_GLOBAL uint8_t* base, KilnImageDesc d, int32_t x, int32_t y, int32_t c,
                                  float v) {
  const int64_t at = kiln_px_offset(d, x, y, c);
  if (d.type == KILN_PIXEL_U8) {
    base[at] = kiln_u8_from_float(v);
  } else if (d.type == KILN_PIXEL_F16) {
    *(KILN_GLOBAL uint16_t*)(base + at) = (uint16_t)kiln_float_to_half(v);
  } else {
    *(KILN_GLOBAL float*)(base + at) = v;
  }
}

/* The bilinear tap of output position i along one axis (half-pixel centres over `extent` source pixels from
 * `start`, clamped to the source): source positions i0 <= i1 and the weight of i1. */
KILN_KERNEL_FN void kiln_px_linear_tap(int32_t i, int32_t out_size, float start, float extent, int32_t in_size,
                                       int32_t* i0, int32_t* i1, float* w) {
  const float step = extent / (float)out_size;
  const float u = kiln_clampf(start + ((float)i + 0.5f) * step - 0.5f, 0.0f, (float)(in_size - 1));
  const int32_t a = (int32_t)u;
  *i0 = a;
  *i1 = kiln_mini(a + 1, in_size - 1);
  *w = u - (float)a;
}

#endif
