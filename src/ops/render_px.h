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
 * OHLC bars: pixel x covers [x, x+1) in bar space; bar i occupies sub-columns 4i (open tick), 4i+1
 * (high-low line), 4i+2 (close tick), 4i+3 (gap), scaled by W / (4 n); rows are snapped to the nearest row. */
#ifndef KILN_OPS_RENDER_PX_H
#define KILN_OPS_RENDER_PX_H

#include "kernel_defs.h"

/* Coverage is non-zero only within r + (a+b)/2 <= r + sqrt(2)/2 of the segment; this is that bound. */
#define KILN_LINE_REACH_PAD 0.7072f
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

/* CDF at s of the projection of a unit pixel square on a unit normal whose absolute components are
 * a >= b: uniform(a) + uniform(b), a trapezoid on [-(a+b)/2, (a+b)/2]. */
KILN_KERNEL_FN float kiln_square_cdf(float s, float a, float b) {
  float h2 = 0.5f * (a + b);
  float h1 = 0.5f * (a - b);
  s = kiln_clampf(s, -h2, h2);
  float inv_2ab = 1.0f / (2.0f * a * b);
  float lo = (s + h2) * (s + h2) * inv_2ab;
  float hi = 1.0f - (h2 - s) * (h2 - s) * inv_2ab;
  float lin = 0.5f + s / a;
  return s < -h1 ? lo : (s > h1 ? hi : lin);
}

/* Coverage of the pixel centred at (px, py) by the capsule around segment (ax, ay) -> (ax+dx, ay+dy) with
 * radius r. inv_len2 = 1/(dx^2+dy^2) (0 for a degenerate segment); (nx, ny) is the segment's unit normal. */
KILN_KERNEL_FN float kiln_capsule_coverage(float px, float py, float ax, float ay, float dx, float dy,
                                           float inv_len2, float nx, float ny, float r) {
  float wx = px - ax;
  float wy = py - ay;
  float t = kiln_clampf((wx * dx + wy * dy) * inv_len2, 0.0f, 1.0f);
  float vx = wx - t * dx;
  float vy = wy - t * dy;
  float dist = kiln_sqrtf(vx * vx + vy * vy);
  int radial = dist > 1e-4f;
  float inv = radial ? 1.0f / dist : 0.0f;
  float ux = radial ? kiln_absf(vx) * inv : kiln_absf(nx);
  float uy = radial ? kiln_absf(vy) * inv : kiln_absf(ny);
  float a = kiln_maxf(ux, uy);
  float b = kiln_maxf(kiln_minf(ux, uy), KILN_MIN_PROJ_B);
  return kiln_square_cdf(r - dist, a, b) - kiln_square_cdf(-r - dist, a, b);
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

/* Rows of column c that segment (x0,y0)-(x1,y1), x0 <= x1, can touch: [*y_lo, *y_hi]; returns 0 if none. */
KILN_KERNEL_FN int32_t kiln_line_segment_rows(int32_t c, float reach, float x0, float y0, float x1, float y1,
                                              int32_t height, int32_t* y_lo, int32_t* y_hi) {
  float cx = (float)c;
  float xa = kiln_maxf(x0, cx - reach);
  float xb = kiln_minf(x1, cx + reach);
  if (xa > xb) return 0;
  float slope = x1 > x0 ? (y1 - y0) / (x1 - x0) : 0.0f;
  float ya = x1 > x0 ? y0 + (xa - x0) * slope : y0;
  float yb = x1 > x0 ? y0 + (xb - x0) * slope : y1;
  float top = kiln_minf(ya, yb) - reach;
  float bottom = kiln_maxf(ya, yb) + reach;
  if (x1 <= x0) {
    top = kiln_minf(y0, y1) - reach;
    bottom = kiln_maxf(y0, y1) + reach;
  }
  int32_t lo = kiln_maxi((int32_t)kiln_ceilf(top), 0);
  int32_t hi = kiln_mini((int32_t)kiln_floorf(bottom), height - 1);
  *y_lo = lo;
  *y_hi = hi;
  return lo <= hi;
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

#endif
