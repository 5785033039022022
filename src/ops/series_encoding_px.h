/* Series encodings as images, per pixel: one cell of a window's n x n field (Gramian angular summation/difference
 * field, Markov transition field, recurrence plot) from the window's prepared row (ops/series_encoding.h prepares it
 * on the host in float64). C-compatible: shared by the CPU, CUDA and the OpenCL program series_encoding.cl. */
#ifndef KILN_OPS_SERIES_ENCODING_PX_H
#define KILN_OPS_SERIES_ENCODING_PX_H

#include "ops/kernel_defs.h"

#define KILN_ENCODING_GASF 0
#define KILN_ENCODING_GADF 1
#define KILN_ENCODING_MTF 2
#define KILN_ENCODING_RP 3

/* Products rounded on their own on every backend (nvcc would otherwise fuse a*b - c*d into an FMA). */
#if defined(__CUDA_ARCH__)
#define KILN_ENCODING_MUL(a, b) __fmul_rn((a), (b))
#else
#define KILN_ENCODING_MUL(a, b) ((a) * (b))
#endif

typedef struct KilnEncodingParams {
  int32_t kind;       /* KILN_ENCODING_* */
  int32_t n;          /* window length */
  int32_t bins;       /* MTF: quantile bins Q (0 for the other kinds) */
  int32_t binary;     /* RP: 1 = thresholded at `threshold` */
  float threshold;    /* RP: eps, in the series' units */
  int32_t row_floats; /* floats of one prepared row: kiln_encoding_row_floats(n, bins) */
  int32_t as_float;   /* float32 images: level / 255 */
  int32_t pad;
} KilnEncodingParams;

/* A prepared row: [0, n) a_t, [n, 2n) b_t, [2n] scale, [2n + 1, 2n + 1 + Q*Q) the MTF transition matrix (row-major).
 * GASF/GADF: a = the window rescaled to [-1, 1], b = sqrt(1 - a^2). MTF: a = the bin of x_t. RP: a = x_t, scale =
 * 1 / (max - min). */
KILN_KERNEL_FN int32_t kiln_encoding_row_floats(int32_t n, int32_t bins) { return 2 * n + 1 + bins * bins; }

/* Time index of output row or column `at` of `size` pixels: nearest (the field cell holding the pixel's centre). */
KILN_KERNEL_FN int32_t kiln_encoding_index(int32_t at, int32_t size, int32_t n) {
  return (int32_t)(((int64_t)(2 * at + 1) * n) / (2 * (int64_t)size));
}

/* Grey level (not rounded) of field cell (i, j): row i, column j; kiln_encoding_level() clamps it to 0..255. */
KILN_KERNEL_FN float kiln_encoding_raw_level(KILN_GLOBAL const float* row, int32_t i, int32_t j, KilnEncodingParams p) {
  if (p.kind == KILN_ENCODING_GASF || p.kind == KILN_ENCODING_GADF) {
    const float xi = row[i];
    const float xj = row[j];
    const float si = row[p.n + i];
    const float sj = row[p.n + j];
    /* GASF cos(phi_i + phi_j) = x_i x_j - s_i s_j; GADF sin(phi_i - phi_j) = s_i x_j - x_i s_j; in [-1, 1]. */
    const float v = p.kind == KILN_ENCODING_GASF ? KILN_ENCODING_MUL(xi, xj) - KILN_ENCODING_MUL(si, sj)
                                                 : KILN_ENCODING_MUL(si, xj) - KILN_ENCODING_MUL(xi, sj);
    return KILN_ENCODING_MUL(v + 1.0f, 127.5f);
  }
  if (p.kind == KILN_ENCODING_MTF) {
    const int32_t bi = (int32_t)row[i];
    const int32_t bj = (int32_t)row[j];
    return KILN_ENCODING_MUL(row[2 * p.n + 1 + bi * p.bins + bj], 255.0f);
  }
  const float d = kiln_absf(row[i] - row[j]);
  const float binary = d <= p.threshold ? 255.0f : 0.0f;
  const float scaled = KILN_ENCODING_MUL(KILN_ENCODING_MUL(d, row[2 * p.n]), 255.0f);
  return p.binary ? binary : scaled; /* a select, not a branch: CPU loops vectorise */
}

KILN_KERNEL_FN float kiln_encoding_level(KILN_GLOBAL const float* row, int32_t i, int32_t j, KilnEncodingParams p) {
  return kiln_clampf(kiln_encoding_raw_level(row, i, j, p), 0.0f, 255.0f);
}

#endif
