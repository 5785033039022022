/* Fused preprocess math shared by every backend (C subset; see kernel_defs.h): resize sampling (resize_px.h,
 * the same tables and float expression as the resize op, without rounding to u8), optional R/B swap, then
 * (clamp(v, 0, 255) * scale - mean[c]) / std[c], stored as f32 or f16 (round to nearest even) in HWC or CHW.
 * NV12 inputs (PreprocessParams::nv12) are sampled through kiln_nv12_rgb (yuv_px.h): each tap is the RGB pixel the
 * colour conversion would have written, so the sums are the ones of that RGB image, bit for bit.
 * OpenCL: the preprocess program is built from the resize program's source followed by this one. */
#ifndef KILN_OPS_PREPROCESS_PX_H
#define KILN_OPS_PREPROCESS_PX_H

#include "ops/resize_px.h"
#include "ops/yuv_px.h"

/* The per-call constants (passed by value to kernels). pad is in input levels, per input channel. */
typedef struct KilnPreprocessConsts {
  float scale;
  int32_t swap_rb;
  float mean[4];
  float std[4];
  float pad[4];
  int32_t nv12; /* the inputs are NV12 views (their picture: the top 2H / 3 rows), converted with `yuv` */
  KilnYuvConsts yuv;
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

/* The RGB levels at output (tx, ty) of an NV12 input, as float: kiln_resize_sample's expression per channel, each
 * tap's pixel converted once for its three channels. */
KILN_KERNEL_FN void kiln_preprocess_nv12_sample(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, KilnResizeImage p,
                                                KILN_GLOBAL const int32_t* index, KILN_GLOBAL const float* weight,
                                                KilnYuvConsts yuv, int32_t tx, int32_t ty, float* acc) {
  const int32_t chroma_row = 2 * d.height / 3;
  const int32_t xe = p.x_table + tx * p.x_taps;
  const int32_t ye = p.y_table + ty * p.y_taps;
  float v[3];
  int32_t rgb[3];
  int32_t i, j, c;
  for (i = 0; i < p.x_taps; ++i) {
    const int32_t sx = index[xe + i];
    for (j = 0; j < p.y_taps; ++j) {
      kiln_nv12_rgb(base, d, chroma_row, yuv, sx, index[ye + j], rgb);
      for (c = 0; c < 3; ++c) v[c] = j == 0 ? weight[ye] * (float)rgb[c] : v[c] + weight[ye + j] * (float)rgb[c];
    }
    for (c = 0; c < 3; ++c) acc[c] = i == 0 ? weight[xe] * v[c] : acc[c] + weight[xe + i] * v[c];
  }
}

/* One output pixel (all channels) of a preprocess call. */
KILN_KERNEL_FN void kiln_preprocess_pixel(KILN_GLOBAL const uint8_t* in_base, KilnImageDesc in_desc,
                                          KILN_GLOBAL uint8_t* out_base, KilnImageDesc out_desc, KilnResizeImage p,
                                          KILN_GLOBAL const int32_t* index, KILN_GLOBAL const float* weight,
                                          KilnPreprocessConsts k, int32_t x, int32_t y) {
  const int32_t tx = x - p.dst_x;
  const int32_t ty = y - p.dst_y;
  const int32_t inside = tx >= 0 && ty >= 0 && tx < p.dst_width && ty < p.dst_height;
  float rgb[3] = {0.0f, 0.0f, 0.0f};
  int32_t c;
  if (k.nv12 != 0 && inside) kiln_preprocess_nv12_sample(in_base, in_desc, p, index, weight, k.yuv, tx, ty, rgb);
  for (c = 0; c < out_desc.channels; ++c) {
    const int32_t sc = kiln_preprocess_source_channel(k.swap_rb, c);
    float v = k.pad[sc];
    if (inside) v = k.nv12 != 0 ? rgb[sc] : kiln_resize_sample(in_base, in_desc, p, index, weight, tx, ty, sc);
    kiln_px_store(out_base, out_desc, x, y, c, kiln_preprocess_normalize(v, k.scale, k.mean[c], k.std[c]));
  }
}

#endif
