/* NV12 -> RGB of one pixel, shared by the colour conversion (color_px.h) and the fused preprocess of NV12 frames
 * (preprocess_px.h), so that both give the same bytes (C subset; see kernel_defs.h). */
#ifndef KILN_OPS_YUV_PX_H
#define KILN_OPS_YUV_PX_H

#include "ops/image_px.h"

/* NV12 -> RGB in 20-bit fixed point (integers: every backend gives the same bytes), as OpenCV's YUV2RGB_NV12 with the
 * exact coefficients of the video's matrix and range (color.cpp, color_yuv_consts): per pixel its luma, per 2x2
 * pixels one U, V pair (nearest, no interpolation), R = (cy (Y - y_offset) + cvr V + 2^19) >> 20 and likewise G
 * (cug U + cvg V) and B (cub U), U and V centred on 128, each clamped to [0, 255]; luma below y_offset counts as
 * y_offset. */
typedef struct KilnYuvConsts {
  int32_t chroma_row; /* the NV12 view's row of the chroma plane's first row; 0: right after the luma */
  int32_t y_offset;
  int32_t cy, cvr, cug, cvg, cub;
  /* RGB -> NV12, 20-bit: Y = (eyr R + eyg G + eyb B + 2^19) >> 20 + y_offset; U (V) from the 2x2 block's sums,
   * 128 + (eur SR + eug SG + eub SB + 2^21) >> 22, clamped. eyr + eyg + eyb is the luma scale and each chroma row
   * sums to 0 exactly, so a gray level keeps U = V = 128. */
  int32_t eyr, eyg, eyb, eur, eug, eub, evr, evg, evb;
} KilnYuvConsts;

KILN_KERNEL_FN uint8_t kiln_yuv_level(int32_t fixed) {
  const int32_t v = (fixed + (1 << 19)) >> 20;
  return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* The RGB levels of pixel (x, y) of an NV12 view whose chroma plane starts at row `chroma_row`. */
KILN_KERNEL_FN void kiln_nv12_rgb(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t chroma_row,
                                  KilnYuvConsts k, int32_t x, int32_t y, int32_t* rgb) {
  const int32_t row = chroma_row + y / 2;
  const int32_t chroma_x = x - x % 2;
  const int32_t luma = (int32_t)base[kiln_px_offset(d, x, y, 0)] - k.y_offset;
  const int32_t u = (int32_t)base[kiln_px_offset(d, chroma_x, row, 0)] - 128;
  const int32_t v = (int32_t)base[kiln_px_offset(d, chroma_x + 1, row, 0)] - 128;
  const int32_t yy = (luma > 0 ? luma : 0) * k.cy;
  rgb[0] = kiln_yuv_level(yy + k.cvr * v);
  rgb[1] = kiln_yuv_level(yy + k.cug * u + k.cvg * v);
  rgb[2] = kiln_yuv_level(yy + k.cub * u);
}

#endif
