/* Chart rendering math, written once for every backend (CPU loops, CUDA and OpenCL kernels).
 * Only scalar arguments: the loops over memory belong to each backend.
 *
 * Coordinates: pixel (x, y) has its centre at integer (x, y) and covers [x-0.5, x+0.5] x [y-0.5, y+0.5];
 * y grows downwards. Line charts place point i of a window at x = i * (W-1)/(n-1) and
 * y = (1 - (v-min)/(max-min)) * (H-1); a flat window (max == min) sits on y = (H-1)/2.
 *
 * Line coverage: the stroke is the union of capsules (segment swept by a disc of radius r = width/2), which
 * gives round joins and caps. For one capsule the coverage of a pixel is computed exactly for the band
 * around the nearest point of the segment: the pixel square projected on the band normal has a trapezoid
 * density, and the covered fraction is the difference of its CDF at the two band edges. Inside a segment
 * the normal is the segment's, so straight runs are exact; at the caps it is radial (the tangent band of
 * the disc). The union of capsules takes the maximum, which slightly under-covers pixels at the inner corner
 * of sharp joins (see docs/ops/render.md for the measured error against a 16x supersampled reference).
 *
 * The value of a line-chart pixel (x, y) is defined as: the maximum of kiln_capsule_coverage() over the segments
 * k in kiln_line_segment_span(x) whose kiln_line_segment_rows(x) contain y, shaded with kiln_shade(); background
 * where there is none. Backends may evaluate more segments or rows (they add exact zeros) and may use
 * kiln_coverage_interior() where the projection is certainly inside the segment; nothing else may differ.
 * A window with a non-finite value renders as background only.
 *
 * OHLC bars: pixel x covers [x, x+1) in bar space; bar i occupies sub-columns 4i (open tick), 4i+1
 * (high-low line), 4i+2 (close tick), 4i+3 (gap), scaled by W / (4 n); rows are snapped to the nearest row.
 * A pixel's level is background + the sum, in increasing sub-column order, of overlap * (ink - background) over
 * the sub-columns whose rows contain it (sub-columns with zero overlap skipped). */
#ifndef KILN_OPS_RENDER_PX_H
#define KILN_OPS_RENDER_PX_H

#include "kernel_defs.h"

/* Coverage is non-zero only within r + (a+b)/2 <= r + sqrt(2)/2 of the segment. The pad is larger than
 * sqrt(2)/2 by a margin that float rounding of distances cannot cross (coordinates up to 32768), so every pixel
 * outside a segment's kiln_line_segment_rows() range has coverage exactly 0 from that segment. */
#define KILN_LINE_REACH_PAD 0.75f
/* Smallest second projection width; keeps 1/(2ab) finite for axis-aligned normals (error < 1e-3/8). */
#define KILN_MIN_PROJ_B 1e-3f

KILN_KERNEL_FN float kiln_point_x(int32_t i, float x_step) { return (float)i * x_step; }

KILN_KERNEL_FN float kiln_line_x_step(int32_t width, int32_t seq_len) {
  return seq_len > 1 ? (float)(width - 1) / (float)(seq_len - 1) : 0.0f;
}

KILN_KERNEL_FN float kiln_point_y(float v, float vmin, float vmax, int32_t height) {
  float span = vmax - vmin;
  float h1 = (float)(height - 1);
  if (!(span > 0.0f)) return 0.5f * h1;
  float norm = (v - vmin) / span;
  return (1.0f - norm) * h1;
}

/* One segment of a polyline with everything the coverage needs precomputed. */
typedef struct KilnSegment {
  float ax, ay;       /* start point */
  float dx, dy;       /* end - start */
  float inv_len2;     /* 1 / |d|^2, 0 for a degenerate segment */
  float nx, ny;       /* unit normal */
  float h1, h2;       /* trapezoid breakpoints of the pixel square projected on the normal */
  float inv_a;        /* 1 / a */
  float inv_2ab;      /* 1 / (2ab) */
  float slope;        /* dy / dx, 0 when dx == 0 */
} KilnSegment;

/* Projection of the unit pixel square on a unit normal with absolute components a >= b:
 * uniform(a) + uniform(b), a trapezoid on [-h2, h2] with flat top [-h1, h1]. Returns its CDF at s. */
KILN_KERNEL_FN float kiln_square_cdf(float s, float h1, float h2, float inv_a, float inv_2ab) {
  s = kiln_clampf(s, -h2, h2);
  float lo = (s + h2) * (s + h2) * inv_2ab;
  float hi = 1.0f - (h2 - s) * (h2 - s) * inv_2ab;
  float lin = 0.5f + s * inv_a;
  return s < -h1 ? lo : (s > h1 ? hi : lin);
}

KILN_KERNEL_FN void kiln_square_projection(float ux, float uy, float* h1, float* h2, float* inv_a, float* inv_2ab) {
  float a = kiln_maxf(ux, uy);
  float b = kiln_maxf(kiln_minf(ux, uy), KILN_MIN_PROJ_B);
  *h1 = 0.5f * (a - b);
  *h2 = 0.5f * (a + b);
  *inv_a = 1.0f / a;
  *inv_2ab = 1.0f / (2.0f * a * b);
}

KILN_KERNEL_FN KilnSegment kiln_segment_make(float x0, float y0, float x1, float y1) {
  KilnSegment g;
  float len2;
  float len;
  g.ax = x0;
  g.ay = y0;
  g.dx = x1 - x0;
  g.dy = y1 - y0;
  len2 = g.dx * g.dx + g.dy * g.dy;
  len = kiln_sqrtf(len2);
  g.inv_len2 = len2 > 0.0f ? 1.0f / len2 : 0.0f;
  g.slope = g.dx > 0.0f ? g.dy / g.dx : 0.0f;
  g.nx = len > 0.0f ? -g.dy / len : 0.0f;
  g.ny = len > 0.0f ? g.dx / len : 1.0f;
  kiln_square_projection(kiln_absf(g.nx), kiln_absf(g.ny), &g.h1, &g.h2, &g.inv_a, &g.inv_2ab);
  return g;
}

/* Position of the pixel centre's projection along the segment (0 at start, 1 at end). */
KILN_KERNEL_FN float kiln_segment_t(KilnSegment g, float px, float py) {
  return ((px - g.ax) * g.dx + (py - g.ay) * g.dy) * g.inv_len2;
}

/* Coverage when the projection falls strictly inside the segment (0 < t < 1): the band normal is the
 * segment's and the distance is linear in the pixel position. `thin` (r < KILN_LINE_REACH_PAD) also subtracts
 * the far band edge, which is exactly 0 for thicker lines. */
KILN_KERNEL_FN float kiln_coverage_interior(KilnSegment g, float px, float py, float r, int32_t thin) {
  float dist = kiln_absf((px - g.ax) * g.nx + (py - g.ay) * g.ny);
  float near_edge = kiln_square_cdf(r - dist, g.h1, g.h2, g.inv_a, g.inv_2ab);
  float far_edge = thin ? kiln_square_cdf(-r - dist, g.h1, g.h2, g.inv_a, g.inv_2ab) : 0.0f;
  return near_edge - far_edge;
}

/* Coverage near a segment end (t <= 0 or t >= 1): tangent band of the end disc, radial normal. */
KILN_KERNEL_FN float kiln_coverage_cap(KilnSegment g, float px, float py, float r) {
  float t = kiln_clampf(kiln_segment_t(g, px, py), 0.0f, 1.0f);
  float vx = px - (g.ax + t * g.dx);
  float vy = py - (g.ay + t * g.dy);
  float dist = kiln_sqrtf(vx * vx + vy * vy);
  int32_t radial = dist > 1e-4f;
  float inv = 1.0f / kiln_maxf(dist, 1e-4f); /* unconditional, so loops stay branch-free */
  float ux = radial ? kiln_absf(vx) * inv : kiln_absf(g.nx);
  float uy = radial ? kiln_absf(vy) * inv : kiln_absf(g.ny);
  float h1, h2, inv_a, inv_2ab;
  kiln_square_projection(ux, uy, &h1, &h2, &inv_a, &inv_2ab);
  return kiln_square_cdf(r - dist, h1, h2, inv_a, inv_2ab) - kiln_square_cdf(-r - dist, h1, h2, inv_a, inv_2ab);
}

/* The canonical per-pixel coverage of one capsule; every backend's result is defined by this function. */
KILN_KERNEL_FN float kiln_capsule_coverage(KilnSegment g, float px, float py, float r) {
  float t = kiln_segment_t(g, px, py);
  return (t > 0.0f && t < 1.0f) ? kiln_coverage_interior(g, px, py, r, r < KILN_LINE_REACH_PAD)
                                 : kiln_coverage_cap(g, px, py, r);
}

/* Segments k (from point k to k+1) that can touch column c: [*k_lo, *k_hi], possibly empty (lo > hi). */
KILN_KERNEL_FN void kiln_line_segment_span(int32_t c, float reach, float x_step, int32_t seq_len, int32_t* k_lo,
                                           int32_t* k_hi) {
  int32_t last = seq_len - 2;
  if (!(x_step > 0.0f)) {
    *k_lo = 0;
    *k_hi = last;
    return;
  }
  float cx = (float)c;
  int32_t lo = (int32_t)kiln_floorf((cx - reach) / x_step) - 1;
  int32_t hi = (int32_t)kiln_floorf((cx + reach) / x_step);
  *k_lo = kiln_maxi(lo, 0);
  *k_hi = kiln_mini(hi, last);
}

/* Rows of column c that segment g can touch (a conservative bound): [*y_lo, *y_hi], possibly empty. */
KILN_KERNEL_FN void kiln_line_segment_rows(int32_t c, float reach, KilnSegment g, int32_t height, int32_t* y_lo,
                                           int32_t* y_hi) {
  float cx = (float)c;
  float x1 = g.ax + g.dx;
  float xa = kiln_maxf(g.ax, cx - reach);
  float xb = kiln_minf(x1, cx + reach);
  float ya = g.ay + (xa - g.ax) * g.slope;
  float yb = g.ay + (xb - g.ax) * g.slope;
  float top = kiln_minf(ya, yb) - reach;
  float bottom = kiln_maxf(ya, yb) + reach;
  if (!(g.dx > 0.0f)) { /* all points share one column (width 1) */
    top = kiln_minf(g.ay, g.ay + g.dy) - reach;
    bottom = kiln_maxf(g.ay, g.ay + g.dy) + reach;
  }
  *y_lo = kiln_maxi((int32_t)kiln_ceilf(top), 0);
  *y_hi = xa > xb ? -1 : kiln_mini((int32_t)kiln_floorf(bottom), height - 1);
}

/* Background blended towards ink by coverage, as a float level in [0, 255]. */
KILN_KERNEL_FN float kiln_shade(float coverage, float background, float ink) {
  return background + (ink - background) * coverage;
}

KILN_KERNEL_FN uint8_t kiln_level_to_u8(float level) {
  return (uint8_t)(int32_t)kiln_clampf(level + 0.5f, 0.0f, 255.0f);
}

KILN_KERNEL_FN float kiln_level_to_unit(float level) { return level / 255.0f; }

/* OHLC: row of a price, snapped to the nearest row. */
KILN_KERNEL_FN int32_t kiln_ohlc_row(float v, float vmin, float vmax, int32_t height) {
  float y = kiln_point_y(v, vmin, vmax, height);
  return kiln_mini(kiln_maxi((int32_t)kiln_floorf(y + 0.5f), 0), height - 1);
}

/* OHLC: horizontal overlap of pixel column c, i.e. [c, c+1), with sub-column m, [m*sx, (m+1)*sx). */
KILN_KERNEL_FN float kiln_ohlc_overlap(int32_t c, int32_t m, float sx) {
  float a = kiln_maxf((float)c, (float)m * sx);
  float b = kiln_minf((float)(c + 1), (float)(m + 1) * sx);
  return kiln_maxf(b - a, 0.0f);
}

/* OHLC: sub-columns m that overlap pixel column c: [*m_lo, *m_hi]. */
KILN_KERNEL_FN void kiln_ohlc_sub_column_span(int32_t c, float sx, int32_t sub_columns, int32_t* m_lo,
                                              int32_t* m_hi) {
  *m_lo = kiln_maxi((int32_t)kiln_floorf((float)c / sx), 0);
  *m_hi = kiln_mini((int32_t)kiln_floorf((float)(c + 1) / sx), sub_columns - 1);
}

#endif
