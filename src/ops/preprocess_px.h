/* Fused preprocess math shared by every backend (C subset; see kernel_defs.h): resize sampling (resize_px.h,
 * the same tables and float expression as the resize op, without rounding to u8), optional R/B swap, then
 * (clamp(v, 0, 255) * scale - mean[c]) / std[c], stored as f32 or f16 (round to nearest even) in HWC or CHW.
 * OpenCL: the preprocess program is built from the resize program's source followed by this one. */
#ifndef KILN_OPS_PREPROCESS_PX_H
#define KILN_OPS_PREPROCESS_PX_H

#include "ops/resize_px.h"

/* The per-call constants (passed by value to kernels). pad is in input levels, per input channel. */
typedef struct KilnPreprocessConsts {
  float scale;
  int32_t swap_rb;
  float mean[4];
  float std[4];
  float pad[4];
} KilnPreprocessConsts;

/* The input channel that feeds output channel c (R/B swap of channels 0 and 2; alpha stays). */
KILN_KERNEL_FN int32_t kiln_preprocess_source_channel(int32_t swap_rb, int32_t c) {
  return swap_rb != 0 && c < 3 ? 2 - c : c;
}

/* v in input levels (a resampled value or the pad) -> the output value. v is first clamped to [0, 255], the range
 * of the u8 input (bicubic overshoots it; OpenCV's u8 resize saturates there too). */
KILN_KERNEL_FN float kiln_preprocess_normalize(float v, float scale, float mean, float std_dev) {
  return (kiln_clampf(v, 0.0f, 255.0f) * scale - mean) / std_dev;
}

/* One output pixel (all channels) of a preprocess call. */
KILN_KERNEL_FN void kiln_preprocess_pixel(KILN_GLOBAL const uint8_t* in_base, KilnImageDesc in_desc,
                                          KILN_GLOBAL uint8_t* out_base, KilnImageDesc out_desc, KilnResizeImage p,
                                          KILN_GLOBAL const int32_t* index, KILN_GLOBAL const float* weight,
                                          KilnPreprocessConsts k, int32_t x, int32_t y) {
  const int32_t tx = x - p.dst_x;
  const int32_t ty = y - p.dst_y;
  const int32_t inside = tx >= 0 && ty >= 0 && tx < p.dst_width && ty < p.dst_height;
  int32_t c;
  for (c = 0; c < out_desc.channels; ++c) {
    const int32_t sc = kiln_preprocess_source_channel(k.swap_rb, c);
    const float v = inside ? kiln_resize_sample(in_base, in_desc, p, index, weight, tx, ty, sc) : k.pad[sc];
    kiln_px_store(out_base, out_desc, x, y, c, kiln_preprocess_normalize(v, k.scale, k.mean[c], k.std[c]));
  }
}

#endif
