/* Per-pixel math of the normalize family (C subset; see kernel_defs.h): out = (in - mean) / std, one IEEE
 * subtraction and one correctly rounded division per value (no reciprocal), so every backend matches a naive
 * loop bit for bit. */
#ifndef KILN_OPS_NORMALIZE_PX_H
#define KILN_OPS_NORMALIZE_PX_H

#include "ops/image_px.h"

KILN_KERNEL_FN float kiln_normalize_value(float v, float mean, float std_dev) { return (v - mean) / std_dev; }

/* Normalizes every channel of pixel (x, y) of an f32 image (any layout); `out` may be `in`. */
KILN_KERNEL_FN void kiln_normalize_pixel(KILN_GLOBAL const uint8_t* in_base, KilnImageDesc in,
                                         KILN_GLOBAL uint8_t* out_base, KilnImageDesc out,
                                         KILN_GLOBAL const float* mean, KILN_GLOBAL const float* std_dev, int32_t x,
                                         int32_t y) {
  int32_t c;
  for (c = 0; c < in.channels; ++c) {
    const float v = *(KILN_GLOBAL const float*)(in_base + kiln_px_offset(in, x, y, c));
    *(KILN_GLOBAL float*)(out_base + kiln_px_offset(out, x, y, c)) = kiln_normalize_value(v, mean[c], std_dev[c]);
  }
}

#endif
