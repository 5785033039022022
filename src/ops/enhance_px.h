/* Per-pixel math of the enhance family (C subset; see kernel_defs.h), shared by the CPU, CUDA and OpenCL.
 *
 * The linear and gamma steps are one 256-entry table built on the host (enhance_table in enhance.cpp); everything
 * here is integer arithmetic or float operations in a fixed order, so every backend produces the same bytes:
 *  - PIL contrast / sharpness blend: PIL's ImagingBlend, (float)d + factor * (float)(x - d), clipped, truncated;
 *  - the SMOOTH filter: PIL's ImagingFilter3x3 with kernel [[1,1,1],[1,5,1],[1,1,1]] / 13 (float weights), the
 *    rows summed bottom row first as PIL does, + 0.5, truncated; border pixels are kept by the caller;
 *  - the unsharp Gaussian: separable float sums over BORDER_REFLECT_101 taps in tap order, rounded to u8;
 *  - the unsharp step: PIL's integer rule x + (x - blurred) * percent / 100 (C division) when |x - blurred| >
 *    threshold. */
#ifndef KILN_OPS_ENHANCE_PX_H
#define KILN_OPS_ENHANCE_PX_H

#include "ops/image_px.h"

#define KILN_ENHANCE_LUT 1
#define KILN_ENHANCE_CONTRAST 2
#define KILN_ENHANCE_SHARPNESS 4
#define KILN_ENHANCE_UNSHARP 8

/* The largest Gaussian kernel: radius (sigma) 50 -> round(50 * 6 + 1) | 1 = 301 taps. */
#define KILN_ENHANCE_MAX_KSIZE 301

/* PIL's SMOOTH kernel weights 1/13 and 5/13 as float (PIL divides the float kernel by the double scale 13). */
#define KILN_ENHANCE_W1 0.07692307692307693f
#define KILN_ENHANCE_W5 0.38461538461538464f

/* Per-call arguments, passed by value to the kernels (fixed-width fields only). */
typedef struct KilnEnhanceArgs {
  int32_t flags;     /* KILN_ENHANCE_* of the steps that run */
  int32_t weight_0;  /* gray weight of channel 0, 1, 2 (PIL's L24: 19595, 38470, 7471 for R, G, B) */
  int32_t weight_1;
  int32_t weight_2;
  float contrast_factor;
  float sharpness_factor;
  int32_t ksize;  /* Gaussian taps (odd) */
  int32_t percent;
  int32_t threshold;
  int32_t pad0;
  int32_t pad1;
  int32_t pad2;
} KilnEnhanceArgs;

/* OpenCV's borderInterpolate for BORDER_REFLECT_101 (gfedcb|abcdefgh|gfedcba), any distance. */
KILN_KERNEL_FN int32_t kiln_enhance_reflect101(int32_t p, int32_t len) {
  if (len == 1) return 0;
  while (p < 0 || p >= len) {
    if (p < 0) {
      p = -p;
    } else {
      p = 2 * len - 2 - p;
    }
  }
  return p;
}

/* PIL's convert("L") of one pixel: (w0*c0 + w1*c1 + w2*c2 + 0x8000) >> 16 (1 channel: the value itself). */
KILN_KERNEL_FN int32_t kiln_enhance_gray(KilnEnhanceArgs a, int32_t channels, int32_t c0, int32_t c1, int32_t c2) {
  if (channels < 3) return c0;
  return (c0 * a.weight_0 + c1 * a.weight_1 + c2 * a.weight_2 + 32768) >> 16;
}

/* PIL's round(mean) of an image's gray levels: int(sum / count + 0.5), in exact integer arithmetic. */
KILN_KERNEL_FN int32_t kiln_enhance_mean_level(int64_t sum, int64_t count) {
  return (int32_t)((2 * sum + count) / (2 * count));
}

/* PIL's Image.blend(degenerate, image, factor) of one value. */
KILN_KERNEL_FN uint8_t kiln_enhance_blend(int32_t degenerate, int32_t value, float factor) {
  if (factor == 0.0f) return (uint8_t)degenerate;
  if (factor == 1.0f) return (uint8_t)value;
  const float diff = (float)(value - degenerate);
  const float scaled = factor * diff;
  const float t = (float)degenerate + scaled;
  if (t <= 0.0f) return 0;
  if (t >= 255.0f) return 255;
  return (uint8_t)(int32_t)t;
}

/* PIL's SMOOTH filter at an interior pixel: top row t0 t1 t2 (y - 1), middle m0 m1 m2, bottom b0 b1 b2 (y + 1). */
KILN_KERNEL_FN int32_t kiln_enhance_smooth(float t0, float t1, float t2, float m0, float m1, float m2, float b0,
                                           float b1, float b2) {
  float ss = 0.5f;
  float row = b0 * KILN_ENHANCE_W1;
  row = row + b1 * KILN_ENHANCE_W1;
  row = row + b2 * KILN_ENHANCE_W1;
  ss = ss + row;
  row = m0 * KILN_ENHANCE_W1;
  row = row + m1 * KILN_ENHANCE_W5;
  row = row + m2 * KILN_ENHANCE_W1;
  ss = ss + row;
  row = t0 * KILN_ENHANCE_W1;
  row = row + t1 * KILN_ENHANCE_W1;
  row = row + t2 * KILN_ENHANCE_W1;
  ss = ss + row;
  if (ss < 0.0f) ss = 0.0f;
  if (ss > 255.0f) ss = 255.0f;
  return (int32_t)ss;
}

/* PIL's UnsharpMask rule for one value. */
KILN_KERNEL_FN uint8_t kiln_enhance_unsharp(int32_t value, int32_t blurred, int32_t percent, int32_t threshold) {
  const int32_t diff = value - blurred;
  const int32_t magnitude = diff < 0 ? -diff : diff;
  if (magnitude <= threshold) return (uint8_t)value;
  const int32_t v = value + diff * percent / 100;
  if (v <= 0) return 0;
  if (v >= 255) return 255;
  return (uint8_t)v;
}

/* The u8 load of channel c of pixel (x, y) of a packed HWC u8 image described by d. */
KILN_KERNEL_FN int32_t kiln_enhance_load(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t x, int32_t y,
                                         int32_t c) {
  return (int32_t)base[d.offset + (int64_t)y * d.row_stride + (int64_t)x * d.channels + c];
}

/* The linear/gamma table and PIL contrast of one value (channel c of a `channels`-channel pixel): alpha (channel 3
 * of 4) is kept, as PIL keeps it. `mean` is the image's degenerate gray level (after the table). */
KILN_KERNEL_FN uint8_t kiln_enhance_point(KilnEnhanceArgs a, KILN_GLOBAL const uint8_t* lut, int32_t channels,
                                          int32_t c, int32_t value, int32_t mean) {
  if (channels == 4 && c == 3) return (uint8_t)value;
  int32_t v = value;
  if ((a.flags & KILN_ENHANCE_LUT) != 0) v = (int32_t)lut[v];
  if ((a.flags & KILN_ENHANCE_CONTRAST) != 0) return kiln_enhance_blend(mean, v, a.contrast_factor);
  return (uint8_t)v;
}

/* PIL Sharpness of channel c of pixel (x, y) of a u8 HWC image: border pixels and alpha are kept. */
KILN_KERNEL_FN uint8_t kiln_enhance_sharpness(KilnEnhanceArgs a, KILN_GLOBAL const uint8_t* base, KilnImageDesc d,
                                              int32_t x, int32_t y, int32_t c) {
  const int32_t value = kiln_enhance_load(base, d, x, y, c);
  if (x == 0 || y == 0 || x == d.width - 1 || y == d.height - 1 || (d.channels == 4 && c == 3)) {
    return (uint8_t)value;
  }
  const int32_t degenerate = kiln_enhance_smooth(
      (float)kiln_enhance_load(base, d, x - 1, y - 1, c), (float)kiln_enhance_load(base, d, x, y - 1, c),
      (float)kiln_enhance_load(base, d, x + 1, y - 1, c), (float)kiln_enhance_load(base, d, x - 1, y, c),
      (float)value, (float)kiln_enhance_load(base, d, x + 1, y, c), (float)kiln_enhance_load(base, d, x - 1, y + 1, c),
      (float)kiln_enhance_load(base, d, x, y + 1, c), (float)kiln_enhance_load(base, d, x + 1, y + 1, c));
  return kiln_enhance_blend(degenerate, value, a.sharpness_factor);
}

/* The horizontal Gaussian pass at (x, y, c) of a u8 HWC image: sum over taps k of weights[k] * in[x - r + k]. */
KILN_KERNEL_FN float kiln_enhance_blur_row(KILN_GLOBAL const uint8_t* base, KilnImageDesc d,
                                           KILN_GLOBAL const float* weights, int32_t ksize, int32_t x, int32_t y,
                                           int32_t c) {
  const int32_t r = ksize / 2;
  float acc = 0.0f;
  for (int32_t k = 0; k < ksize; ++k) {
    const int32_t sx = kiln_enhance_reflect101(x - r + k, d.width);
    acc = acc + weights[k] * (float)kiln_enhance_load(base, d, sx, y, c);
  }
  return acc;
}

/* The vertical Gaussian pass over the horizontal pass's f32 HWC image (desc `rows`), rounded to u8. */
KILN_KERNEL_FN int32_t kiln_enhance_blur_col(KILN_GLOBAL const uint8_t* rows_base, KilnImageDesc rows,
                                             KILN_GLOBAL const float* weights, int32_t ksize, int32_t x, int32_t y,
                                             int32_t c) {
  const int32_t r = ksize / 2;
  float acc = 0.0f;
  for (int32_t k = 0; k < ksize; ++k) {
    const int32_t sy = kiln_enhance_reflect101(y - r + k, rows.height);
    const int64_t at = rows.offset + (int64_t)sy * rows.row_stride + ((int64_t)x * rows.channels + c) * 4;
    acc = acc + weights[k] * *(KILN_GLOBAL const float*)(rows_base + at);
  }
  return (int32_t)kiln_u8_from_float(acc);
}

#endif
