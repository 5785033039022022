/* Per-pixel math of the blur family (C subset; see kernel_defs.h), shared verbatim by the CPU, CUDA and OpenCL.
 *
 * An image of w x h becomes a small one of max(1, w / factor) x max(1, h / factor): each small pixel the rounded
 * integer mean of its factor x factor block (coordinates clamped to the image). Each box pass sums 2 * radius + 1
 * small pixels along a row, then along a column (coordinates clamped), and scales the integer sum by the float
 * 1 / (2 * radius + 1) (computed on the host), + 0.5, truncated. The small image is enlarged back with
 * kiln_px_linear_tap's taps: horizontal blends of the two rows first, then the vertical blend, + 0.5, truncated. */
#ifndef KILN_OPS_BLUR_PX_H
#define KILN_OPS_BLUR_PX_H

#include "ops/image_px.h"

/* Resolved parameters of one call (passed by value to kernels). */
typedef struct KilnBlurArgs {
  int32_t factor;
  int32_t radius;
  float norm; /* 1.0f / (2 * radius + 1) */
  int32_t pad0;
} KilnBlurArgs;

KILN_KERNEL_FN int32_t kiln_blur_small_size(int32_t size, int32_t factor) { return kiln_maxi(1, size / factor); }

/* Channel c of small pixel (sx, sy) of the image `d` (u8 HWC). */
KILN_KERNEL_FN uint8_t kiln_blur_shrink_px(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t factor,
                                           int32_t sx, int32_t sy, int32_t c) {
  int32_t sum = 0;
  int32_t dy, dx;
  for (dy = 0; dy < factor; ++dy) {
    const int32_t y = kiln_mini(sy * factor + dy, d.height - 1);
    for (dx = 0; dx < factor; ++dx) {
      sum += base[kiln_px_offset(d, kiln_mini(sx * factor + dx, d.width - 1), y, c)];
    }
  }
  return (uint8_t)((sum + factor * factor / 2) / (factor * factor));
}

/* A box sum scaled back to a level. */
KILN_KERNEL_FN uint8_t kiln_blur_box_level(int32_t sum, float norm) { return (uint8_t)((float)sum * norm + 0.5f); }

/* Channel c of pixel (x, y) after one box (horizontal when `horizontal`, else vertical) over the small image `d`. */
KILN_KERNEL_FN uint8_t kiln_blur_box_px(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, KilnBlurArgs a,
                                        int32_t horizontal, int32_t x, int32_t y, int32_t c) {
  int32_t sum = 0;
  int32_t k;
  for (k = -a.radius; k <= a.radius; ++k) {
    const int32_t xx = horizontal ? kiln_mini(kiln_maxi(x + k, 0), d.width - 1) : x;
    const int32_t yy = horizontal ? y : kiln_mini(kiln_maxi(y + k, 0), d.height - 1);
    sum += base[kiln_px_offset(d, xx, yy, c)];
  }
  return kiln_blur_box_level(sum, a.norm);
}

/* The bilinear blend of four small values (row 0: a, b; row 1: p, q) by the weights of the second column and row. */
KILN_KERNEL_FN uint8_t kiln_blur_enlarge_level(int32_t a, int32_t b, int32_t p, int32_t q, float wx, float wy) {
  const float top = (float)a + (float)(b - a) * wx;
  const float bottom = (float)p + (float)(q - p) * wx;
  return (uint8_t)(top + (bottom - top) * wy + 0.5f);
}

/* Channel c of output pixel (x, y) of an out_w x out_h image enlarged from the small image `d`. */
KILN_KERNEL_FN uint8_t kiln_blur_enlarge_px(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t out_w,
                                            int32_t out_h, int32_t x, int32_t y, int32_t c) {
  int32_t x0, x1, y0, y1;
  float wx, wy;
  kiln_px_linear_tap(x, out_w, 0.0f, (float)d.width, d.width, &x0, &x1, &wx);
  kiln_px_linear_tap(y, out_h, 0.0f, (float)d.height, d.height, &y0, &y1, &wy);
  return kiln_blur_enlarge_level(base[kiln_px_offset(d, x0, y0, c)], base[kiln_px_offset(d, x1, y0, c)],
                                 base[kiln_px_offset(d, x0, y1, c)], base[kiln_px_offset(d, x1, y1, c)], wx, wy);
}

#endif
