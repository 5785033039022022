/* Resize sampling shared by every backend (C subset; see kernel_defs.h).
 *
 * Every interpolation is separable and table driven: the host builds, per image and axis, `taps` source indices
 * and float weights for each output coordinate (resize_plan_make in resize.cpp, OpenCV's conventions), and every
 * backend evaluates the same float expression from them:
 *
 *   v(x, y, c) = sum_i wx[i] * (sum_j wy[j] * src(ix[i], iy[j], c))
 *
 * with each sum taken left to right starting from its first product (no 0.0f seed, so signed zeros agree too):
 * the column (vertical) sums first, then the row (horizontal) sum. Indices are absolute source coordinates (the
 * crop offset included) and always inside the image; unused taps carry weight 0 and a valid index. */
#ifndef KILN_OPS_RESIZE_PX_H
#define KILN_OPS_RESIZE_PX_H

#include "ops/image_px.h"

/* Where one image's tables start and where its resized pixels land in its output (the letterbox rectangle;
 * the whole output when stretching). Table entries: column table x_table + tx * x_taps + i, row table
 * y_table + ty * y_taps + j, for output coordinates (tx, ty) relative to (dst_x, dst_y). */
typedef struct KilnResizeImage {
  int32_t x_table;
  int32_t y_table;
  int32_t x_taps;
  int32_t y_taps;
  int32_t dst_x;
  int32_t dst_y;
  int32_t dst_width;
  int32_t dst_height;
} KilnResizeImage;

/* The letterbox border value per channel (passed by value to kernels). */
typedef struct KilnResizePad {
  float v[4];
} KilnResizePad;

/* The resized value of channel c at output (tx, ty) relative to the destination rectangle, as float. */
KILN_KERNEL_FN float kiln_resize_sample(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, KilnResizeImage p,
                                        KILN_GLOBAL const int32_t* index, KILN_GLOBAL const float* weight,
                                        int32_t tx, int32_t ty, int32_t c) {
  const int32_t xe = p.x_table + tx * p.x_taps;
  const int32_t ye = p.y_table + ty * p.y_taps;
  float acc = 0.0f;
  int32_t i;
  int32_t j;
  for (i = 0; i < p.x_taps; ++i) {
    const int32_t sx = index[xe + i];
    float v = weight[ye] * kiln_px_load(base, d, sx, index[ye], c);
    for (j = 1; j < p.y_taps; ++j) v = v + weight[ye + j] * kiln_px_load(base, d, sx, index[ye + j], c);
    acc = i == 0 ? weight[xe] * v : acc + weight[xe + i] * v;
  }
  return acc;
}

/* Resize's output rounding: u8 rounds half to even and saturates (OpenCV's saturate_cast), f32 is stored as is. */
KILN_KERNEL_FN void kiln_resize_store(KILN_GLOBAL uint8_t* base, KilnImageDesc d, int32_t x, int32_t y, int32_t c,
                                      float v) {
  if (d.type == KILN_PIXEL_U8) {
    base[kiln_px_offset(d, x, y, c)] = kiln_u8_round_even(v);
  } else {
    kiln_px_store(base, d, x, y, c, v);
  }
}

/* One output pixel (all channels) of a resize: the sample inside the destination rectangle, `pad` outside. */
KILN_KERNEL_FN void kiln_resize_pixel(KILN_GLOBAL const uint8_t* in_base, KilnImageDesc in_desc,
                                      KILN_GLOBAL uint8_t* out_base, KilnImageDesc out_desc, KilnResizeImage p,
                                      KILN_GLOBAL const int32_t* index, KILN_GLOBAL const float* weight,
                                      KilnResizePad pad, int32_t x, int32_t y) {
  const int32_t tx = x - p.dst_x;
  const int32_t ty = y - p.dst_y;
  const int32_t inside = tx >= 0 && ty >= 0 && tx < p.dst_width && ty < p.dst_height;
  int32_t c;
  for (c = 0; c < out_desc.channels; ++c) {
    const float v = inside ? kiln_resize_sample(in_base, in_desc, p, index, weight, tx, ty, c) : pad.v[c];
    kiln_resize_store(out_base, out_desc, x, y, c, v);
  }
}

#endif
