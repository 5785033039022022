/* Per-pixel math of the quality family (C subset; see kernel_defs.h), shared by the CPU, CUDA and OpenCL.
 *
 * Every metric is reduced to integer sums, so every backend and every split of the work (threads, row blocks,
 * work-groups) gives the same totals bit for bit:
 *   gray      OpenCV 4's u8 fixed-point weights (cvtColor RGB/BGR(A)2GRAY, color_rgb.simd.hpp RY15/GY15/BY15):
 *             kiln_gray_u8 (image_px.h), bit-exact with cv::cvtColor. (The older 14-bit weights
 *             (r*4899 + g*9617 + b*1868 + 2^13) >> 14 differ from cvtColor by 1 level on ~0.3% of pixels.)
 *   laplacian [0 1 0; 1 -4 1; 0 1 0] (cv::Laplacian ksize=1), an integer in [-1020, 1020]
 *   sobel     3x3 Sobel gx, gy (cv::Sobel ksize=3), integers in [-1020, 1020]
 *   magnitude sqrtf(gx*gx + gy*gy): the argument is an integer <= 2080800 < 2^24, exact in float, and sqrtf is
 *             correctly rounded on every backend (IEEE on the CPU, -prec-sqrt=true on CUDA,
 *             -cl-fp32-correctly-rounded-divide-sqrt on OpenCL). A nonzero result is >= 1 and < 2^11, so it is a
 *             multiple of 2^-23: magnitude * 2^23 is an exact integer (kiln_quality_mag_fixed), summed in int64.
 * Borders are BORDER_REFLECT_101 (cv::borderInterpolate): -1 -> 1, n -> n - 2, and 0 for a 1-pixel extent. */
#ifndef KILN_OPS_QUALITY_PX_H
#define KILN_OPS_QUALITY_PX_H

#include "ops/image_px.h"

/* 2^23: the fixed-point scale of the summed magnitudes. */
#define KILN_QUALITY_MAG_SCALE 8388608.0f
/* Work-group / block size of the GPU reductions. */
#define KILN_QUALITY_GROUP 256
/* Image rows per GPU work-group. */
#define KILN_QUALITY_BLOCK_ROWS 16
/* Number of int64 sums per image (or per block of rows). */
#define KILN_QUALITY_SUMS 5

/* The integer sums of one image (or of a block of its rows). */
typedef struct KilnQualitySums {
  int64_t gray_sum;
  int64_t gray_sq;
  int64_t lap_sum;
  int64_t lap_sq;
  int64_t mag_fixed; /* sum of magnitude * 2^23 */
} KilnQualitySums;

/* cv::borderInterpolate(p, n, BORDER_REFLECT_101) for p in [-1, n]. */
KILN_KERNEL_FN int32_t kiln_quality_reflect(int32_t p, int32_t n) {
  if (n == 1) return 0;
  if (p < 0) return -p;
  if (p >= n) return 2 * n - 2 - p;
  return p;
}

/* Gray level of pixel (x, y) of a u8 image with 1, 3 or 4 channels (HWC or CHW); bgr: channel 0 is blue. */
KILN_KERNEL_FN int32_t kiln_quality_gray_at(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t x, int32_t y,
                                            int32_t bgr) {
  if (d.channels == 1) return (int32_t)base[kiln_px_offset(d, x, y, 0)];
  const int32_t c0 = (int32_t)base[kiln_px_offset(d, x, y, 0)];
  const int32_t c1 = (int32_t)base[kiln_px_offset(d, x, y, 1)];
  const int32_t c2 = (int32_t)base[kiln_px_offset(d, x, y, 2)];
  return bgr != 0 ? kiln_gray_u8(c2, c1, c0) : kiln_gray_u8(c0, c1, c2);
}

/* Gradient magnitude of integer Sobel responses, as float (exact argument, correctly rounded sqrt). */
KILN_KERNEL_FN float kiln_quality_magnitude(int32_t gx, int32_t gy) {
  return kiln_sqrtf((float)(gx * gx + gy * gy));
}

/* magnitude * 2^23 as an exact integer (see the header comment). */
KILN_KERNEL_FN int64_t kiln_quality_mag_fixed(float magnitude) {
  return (int64_t)(magnitude * KILN_QUALITY_MAG_SCALE);
}

/* The 3x3 neighbourhood of one pixel, as gray levels: row 0 above, 1 the pixel's row, 2 below. */
typedef struct KilnQualityWindow {
  int32_t g00, g01, g02;
  int32_t g10, g11, g12;
  int32_t g20, g21, g22;
} KilnQualityWindow;

KILN_KERNEL_FN int32_t kiln_quality_laplacian(KilnQualityWindow w) {
  return w.g01 + w.g10 + w.g12 + w.g21 - 4 * w.g11;
}

KILN_KERNEL_FN int32_t kiln_quality_sobel_x(KilnQualityWindow w) {
  return (w.g02 - w.g00) + 2 * (w.g12 - w.g10) + (w.g22 - w.g20);
}

KILN_KERNEL_FN int32_t kiln_quality_sobel_y(KilnQualityWindow w) {
  return (w.g20 + 2 * w.g21 + w.g22) - (w.g00 + 2 * w.g01 + w.g02);
}

/* The window around (x, y), gray levels read from the image with reflect-101 borders (GPU kernels). */
KILN_KERNEL_FN KilnQualityWindow kiln_quality_window_at(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t x,
                                                       int32_t y, int32_t bgr) {
  const int32_t xl = kiln_quality_reflect(x - 1, d.width);
  const int32_t xr = kiln_quality_reflect(x + 1, d.width);
  const int32_t yu = kiln_quality_reflect(y - 1, d.height);
  const int32_t yd = kiln_quality_reflect(y + 1, d.height);
  KilnQualityWindow w;
  w.g00 = kiln_quality_gray_at(base, d, xl, yu, bgr);
  w.g01 = kiln_quality_gray_at(base, d, x, yu, bgr);
  w.g02 = kiln_quality_gray_at(base, d, xr, yu, bgr);
  w.g10 = kiln_quality_gray_at(base, d, xl, y, bgr);
  w.g11 = kiln_quality_gray_at(base, d, x, y, bgr);
  w.g12 = kiln_quality_gray_at(base, d, xr, y, bgr);
  w.g20 = kiln_quality_gray_at(base, d, xl, yd, bgr);
  w.g21 = kiln_quality_gray_at(base, d, x, yd, bgr);
  w.g22 = kiln_quality_gray_at(base, d, xr, yd, bgr);
  return w;
}

/* Adds one pixel's contributions to `s` (the GPU kernels' per-item accumulation). */
KILN_KERNEL_FN void kiln_quality_accumulate(KilnQualityWindow w, int64_t* gray_sum, int64_t* gray_sq,
                                            int64_t* lap_sum, int64_t* lap_sq, int64_t* mag_fixed) {
  const int32_t lap = kiln_quality_laplacian(w);
  const float magnitude = kiln_quality_magnitude(kiln_quality_sobel_x(w), kiln_quality_sobel_y(w));
  *gray_sum += (int64_t)w.g11;
  *gray_sq += (int64_t)(w.g11 * w.g11);
  *lap_sum += (int64_t)lap;
  *lap_sq += (int64_t)(lap * lap);
  *mag_fixed += kiln_quality_mag_fixed(magnitude);
}

#endif
