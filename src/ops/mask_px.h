/* Per-pixel math of the mask family (C subset; see kernel_defs.h), shared verbatim by the CPU, CUDA and OpenCL.
 *
 * Stage 1 (decide): logits (f32/f16, CHW, C channels) -> one u8 per pixel: a class id (argmax) or 0/foreground
 * (probability >= threshold). Stage 2 (smooth, optional): median, or erode/dilate passes for open/close, over a
 * (2r+1)^2 square window with replicated borders. The largest-component filter is host code (mask_cpu.cpp).
 *
 * No libm transcendental runs on a device: argmax of softmax/sigmoid is the argmax of the logits, the sigmoid
 * threshold is a logit threshold computed once on the host, and the softmax probability uses kiln_expf (image_px.h)
 * (+, -, *, floor and exponent bits only; no subnormal intermediate), so every backend gets the same bits. */
#ifndef KILN_OPS_MASK_PX_H
#define KILN_OPS_MASK_PX_H

#include "ops/image_px.h"

#define KILN_MASK_ACT_SOFTMAX 1
#define KILN_MASK_ACT_SIGMOID 2
#define KILN_MASK_ACT_NONE 3

/* Resolved parameters of one call (the same on every backend; passed by value to kernels). */
typedef struct KilnMaskParams {
  int32_t activation;      /* KILN_MASK_ACT_* (auto already resolved) */
  int32_t target;          /* -1: argmax class ids; >= 0: binary mask of that channel */
  float threshold;         /* probability threshold in (0, 1) (softmax, none) */
  float logit_threshold;   /* sigmoid: the smallest float logit l with sigmoid(l) >= threshold (exact, host) */
  int32_t foreground;      /* 1..255 */
  int32_t radius;          /* smoothing window (2 radius + 1)^2 */
} KilnMaskParams;

/* The u8 decision for pixel (x, y) of a logits image. */
KILN_KERNEL_FN uint8_t kiln_mask_decide(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t x, int32_t y,
                                        KilnMaskParams p) {
  if (p.target < 0) {
    /* argmax over channels (ties: the lowest class id); softmax and sigmoid are monotonic, so the argmax of the
     * probabilities is the argmax of the logits. NaN never wins over a number. */
    float best = kiln_px_load(base, d, x, y, 0);
    int32_t best_c = 0;
    for (int32_t c = 1; c < d.channels; ++c) {
      const float v = kiln_px_load(base, d, x, y, c);
      if (v > best || (best != best && v == v)) {
        best = v;
        best_c = c;
      }
    }
    return (uint8_t)best_c;
  }
  const float l = kiln_px_load(base, d, x, y, p.target);
  int32_t on = 0;
  if (p.activation == KILN_MASK_ACT_SIGMOID) {
    on = l >= p.logit_threshold;
  } else if (p.activation == KILN_MASK_ACT_NONE) {
    on = l >= p.threshold;
  } else {
    /* softmax: p_k = 1 / sum_j exp(l_j - l_k), summed in channel order (the j = k term is exactly 1) */
    float sum = 0.0f;
    for (int32_t c = 0; c < d.channels; ++c) {
      const float v = c == p.target ? l : kiln_px_load(base, d, x, y, c);
      sum = sum + kiln_expf(v - l);
    }
    const float prob = 1.0f / sum;
    on = prob >= p.threshold;
  }
  return on ? (uint8_t)p.foreground : (uint8_t)0;
}

/* u8 single-channel mask access (any layout: one channel). */
KILN_KERNEL_FN uint8_t kiln_mask_u8_at(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t x, int32_t y) {
  return base[d.offset + (int64_t)y * d.row_stride + x];
}

/* Median of the (2r+1)^2 window around (x, y), replicated borders: the largest m with count(v < m) <= n / 2,
 * found bit by bit (8 passes over the window; exact for any u8 values). */
KILN_KERNEL_FN uint8_t kiln_mask_median(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t x, int32_t y,
                                        int32_t r) {
  const int32_t side = 2 * r + 1;
  const int32_t rank = (side * side) / 2;
  int32_t m = 0;
  for (int32_t bit = 7; bit >= 0; --bit) {
    const int32_t cand = m | (1 << bit);
    int32_t below = 0;
    for (int32_t dy = -r; dy <= r; ++dy) {
      const int32_t yy = kiln_mini(kiln_maxi(y + dy, 0), d.height - 1);
      for (int32_t dx = -r; dx <= r; ++dx) {
        const int32_t xx = kiln_mini(kiln_maxi(x + dx, 0), d.width - 1);
        below += (int32_t)kiln_mask_u8_at(base, d, xx, yy) < cand ? 1 : 0;
      }
    }
    if (below <= rank) m = cand;
  }
  return (uint8_t)m;
}

/* Minimum (erode, dilate == 0) or maximum (dilate != 0) over the (2r+1)^2 window; pixels outside the image are
 * ignored (the same as replicating the border, and as OpenCV's default morphology border). */
KILN_KERNEL_FN uint8_t kiln_mask_morph(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t x, int32_t y,
                                       int32_t r, int32_t dilate) {
  const int32_t y0 = kiln_maxi(y - r, 0);
  const int32_t y1 = kiln_mini(y + r, d.height - 1);
  const int32_t x0 = kiln_maxi(x - r, 0);
  const int32_t x1 = kiln_mini(x + r, d.width - 1);
  int32_t v = dilate ? 0 : 255;
  for (int32_t yy = y0; yy <= y1; ++yy) {
    for (int32_t xx = x0; xx <= x1; ++xx) {
      const int32_t s = (int32_t)kiln_mask_u8_at(base, d, xx, yy);
      v = dilate ? kiln_maxi(v, s) : kiln_mini(v, s);
    }
  }
  return (uint8_t)v;
}

#endif
