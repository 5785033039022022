/* Per-pixel math of the warp family (C subset; see kernel_defs.h): affine warp with bilinear sampling, in the
 * conventions of cv::warpAffine(INTER_LINEAR): output pixel (x, y) samples the source at
 *   sx = (m0*x + m1*y) + m2,  sy = (m3*x + m4*y) + m5
 * (m = the destination -> source matrix, pixel centres at integer coordinates), from the four pixels around
 * (sx, sy) with weights (1-fx, fx) x (1-fy, fy). Taps outside the source follow the border mode (OpenCV's
 * borderInterpolate; constant: the border value). Coordinates and weights are float (OpenCV quantises them to
 * 1/32 pixel; kiln does not). u8 results round half to even and saturate (saturate_cast). */
#ifndef KILN_OPS_WARP_PX_H
#define KILN_OPS_WARP_PX_H

#include "ops/image_px.h"

/* Values of BorderMode (include/kiln/ops/warp.h). */
#define KILN_BORDER_CONSTANT 0
#define KILN_BORDER_REPLICATE 1
#define KILN_BORDER_REFLECT 2
#define KILN_BORDER_REFLECT101 3

/* The source index for coordinate p of a row or column of `len` pixels, or -1 for the border value
 * (cv::borderInterpolate, written with a modulo so far-away coordinates cost no loop). */
KILN_KERNEL_FN int32_t kiln_warp_border_index(int32_t p, int32_t len, int32_t mode) {
  int32_t period;
  if (p >= 0 && p < len) return p;
  if (mode == KILN_BORDER_CONSTANT) return -1;
  if (mode == KILN_BORDER_REPLICATE) return p < 0 ? 0 : len - 1;
  if (len == 1) return 0;
  if (mode == KILN_BORDER_REFLECT) {
    /* fedcba|abcdefgh|hgfedcb: period 2*len */
    period = 2 * len;
    p = p % period;
    if (p < 0) p += period;
    return p < len ? p : period - 1 - p;
  }
  /* reflect-101, gfedcb|abcdefgh|gfedcba: period 2*len - 2 */
  period = 2 * len - 2;
  p = p % period;
  if (p < 0) p += period;
  return p < len ? p : period - p;
}

/* Float -> int32 floor of a coordinate kept in [-2^30, 2^30] (NaN goes to the low end), so every backend
 * converts the same value without undefined behaviour. */
KILN_KERNEL_FN float kiln_warp_coord_clamp(float v) {
  if (!(v >= -1073741824.0f)) return -1073741824.0f;
  if (v > 1073741824.0f) return 1073741824.0f;
  return v;
}

/* The value of channel c at integer source position (ix, iy) after the border rule. */
KILN_KERNEL_FN float kiln_warp_tap(KILN_GLOBAL const uint8_t* in_base, KilnImageDesc in, int32_t ix, int32_t iy,
                                   int32_t c, int32_t mode, float border) {
  const int32_t bx = kiln_warp_border_index(ix, in.width, mode);
  const int32_t by = kiln_warp_border_index(iy, in.height, mode);
  if (bx < 0 || by < 0) return border;
  return kiln_px_load(in_base, in, bx, by, c);
}

/* Writes every channel of output pixel (x, y). m: destination -> source 2x3 matrix; b0..b3: border values per
 * channel (saturated to u8 levels for u8 images). */
KILN_KERNEL_FN void kiln_warp_pixel(KILN_GLOBAL const uint8_t* in_base, KilnImageDesc in, KILN_GLOBAL uint8_t* out_base,
                                    KilnImageDesc out, KILN_GLOBAL const float* m, int32_t mode, float b0, float b1,
                                    float b2, float b3, int32_t x, int32_t y) {
  const float fxd = (float)x;
  const float fyd = (float)y;
  const float sx = kiln_warp_coord_clamp((m[0] * fxd + m[1] * fyd) + m[2]);
  const float sy = kiln_warp_coord_clamp((m[3] * fxd + m[4] * fyd) + m[5]);
  const float x0f = kiln_floorf(sx);
  const float y0f = kiln_floorf(sy);
  const float fx = sx - x0f;
  const float fy = sy - y0f;
  const float gx = 1.0f - fx;
  const float gy = 1.0f - fy;
  const int32_t x0 = (int32_t)x0f;
  const int32_t y0 = (int32_t)y0f;
  int32_t c;
  for (c = 0; c < out.channels; ++c) {
    const float border_value = c == 0 ? b0 : (c == 1 ? b1 : (c == 2 ? b2 : b3));
    /* like cv::Scalar on a u8 image: saturate_cast<uchar> */
    const float border = in.type == KILN_PIXEL_U8 ? (float)kiln_u8_round_even(border_value) : border_value;
    const float p00 = kiln_warp_tap(in_base, in, x0, y0, c, mode, border);
    const float p01 = kiln_warp_tap(in_base, in, x0 + 1, y0, c, mode, border);
    const float p10 = kiln_warp_tap(in_base, in, x0, y0 + 1, c, mode, border);
    const float p11 = kiln_warp_tap(in_base, in, x0 + 1, y0 + 1, c, mode, border);
    const float top = p00 * gx + p01 * fx;
    const float bottom = p10 * gx + p11 * fx;
    const float v = top * gy + bottom * fy;
    const int64_t at = kiln_px_offset(out, x, y, c);
    if (out.type == KILN_PIXEL_U8) {
      out_base[at] = kiln_u8_round_even(v);
    } else {
      kiln_px_store(out_base, out, x, y, c, v);
    }
  }
}

#endif
