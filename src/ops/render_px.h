/* Chart rendering math, written once for every backend (CPU loops, CUDA and OpenCL kernels).
 * Only scalar arguments: the loops over memory belong to each backend.
 *
 * Coordinates: pixel (x, y) has its centre at integer (x, y) and covers [x-0.5, x+0.5] x [y-0.5, y+0.5];
 * y grows downwards. Line charts place point i of a window at x = i * (W-1)/(n-1) and
 * y = (1 - (v-min)/(max-min)) * (H-1); a flat window (max == min) sits on y = (H-1)/2.
 *
 * Line coverage: the stroke is the set of points within r = width/2 of the polyline (a union of capsules), which
 * gives round joins and caps. A pixel's coverage is computed from the nearest point of the polyline to its centre:
 * the pixel square, projected on the direction to that point, has a trapezoid density, and the covered fraction is
 * the difference of its CDF at the two edges of the band of half-width r there (kiln_nearest_coverage). Inside a
 * segment that direction is the segment's normal, so straight runs are exact; at the end points it is radial. At
 * the inner corner of sharp joins the band of the nearest segment stands for the union, which under-covers a few
 * pixels (see docs/ops/render.md for the measured error against a 16x supersampled reference).
 *
 * The value of a line-chart pixel (x, y) is defined as: kiln_nearest_coverage() of the nearest point found by
 * kiln_nearest_update() over the segments k in kiln_line_segment_span(x) whose kiln_line_segment_rows(x) contain
 * y, in increasing k, shaded with kiln_shade(); background where there is none. Backends may visit more segments
 * (the nearest one is always among those whose rows contain y, when the coverage is not 0); nothing else may
 * differ.
 * A window with a non-finite value renders as background only.
 *
 * OHLC bars: pixel x covers [x, x+1) in bar space; bar i occupies sub-columns 4i (open tick), 4i+1
 * (high-low line), 4i+2 (close tick), 4i+3 (gap), scaled by W / (4 n); rows are snapped to the nearest row.
 * A pixel's level is background + the sum, in increasing sub-column order, of overlap * (ink - background) over
 * the sub-columns whose rows contain it (sub-columns with zero overlap skipped). Without the gap (bar_gap false)
 * a bar has the three sub-columns 3i, 3i+1, 3i+2, so at a width of 3 n every pixel is one whole sub-column.
 *
 * Layers (after the price layer, which fills rows [0, price_rows) scaled to the min and max of the prices and the
 * moving averages; every other pixel starts as background): the volume panel and the moving-average lines, drawn
 * in ink without anti-aliasing by integer rules, so every backend sets the same pixels. Day i sits in column
 * kiln_day_column(). Its volume bar fills the bottom kiln_volume_rows() rows of that column (several days in one
 * column: the union; each bar in its day's volume ink, days in increasing order, so a later day's ink wins where
 * they overlap). A day is bullish (kiln_day_bullish) when its close is >= its open, or, on a close-only series, >= the
 * day before's close (the window's first day: bullish). A moving average is the union over k of the 1-px aliased segments (kiln_aliased_rows) from
 * (column of day k, kiln_ohlc_row(ma_k)) to day k+1's, over the price rows. */
#ifndef KILN_OPS_RENDER_PX_H
#define KILN_OPS_RENDER_PX_H

#include "kernel_defs.h"

/* Coverage is non-zero only within r + (a+b)/2 <= r + sqrt(2)/2 of the polyline. The pad is larger than
 * sqrt(2)/2 by a margin that float rounding of distances cannot cross (coordinates up to 32768), so a segment is
 * farther than that from every pixel outside its kiln_line_segment_rows() range. */
#define KILN_LINE_REACH_PAD 0.75f
/* Smallest second projection width (of a unit normal); keeps 1/(2ab) finite for axis-aligned normals
 * (error < 1e-3/8). */
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

/* One segment of a polyline with what the coverage needs precomputed. */
typedef struct KilnSegment {
  float ax, ay;   /* start point */
  float dx, dy;   /* end - start */
  float inv_len2; /* 1 / |d|^2, 0 for a degenerate segment */
  float slope;    /* dy / dx, 0 when dx == 0 */
} KilnSegment;

KILN_KERNEL_FN KilnSegment kiln_segment_make(float x0, float y0, float x1, float y1) {
  KilnSegment g;
  float len2;
  g.ax = x0;
  g.ay = y0;
  g.dx = x1 - x0;
  g.dy = y1 - y0;
  len2 = g.dx * g.dx + g.dy * g.dy;
  g.inv_len2 = len2 > 0.0f ? 1.0f / len2 : 0.0f;
  g.slope = g.dx > 0.0f ? g.dy / g.dx : 0.0f;
  return g;
}

/* The nearest point of the stroke's centre line found so far for one pixel centre: the offset v = pixel - point
 * and its squared length. KILN_NEAREST_NONE (no segment yet) is far enough to give coverage 0 and keeps every
 * intermediate of kiln_nearest_coverage() finite. */
typedef struct KilnNearest {
  float d2, vx, vy;
} KilnNearest;

#define KILN_NEAREST_NONE_D2 1e30f
#define KILN_NEAREST_NONE_VX 1e15f

KILN_KERNEL_FN KilnNearest kiln_nearest_none(void) {
  KilnNearest n;
  n.d2 = KILN_NEAREST_NONE_D2;
  n.vx = KILN_NEAREST_NONE_VX;
  n.vy = 0.0f;
  return n;
}

/* Offset from segment g's nearest point to the pixel centre (px, py), given ox = px - g.ax and ox_dx = ox * g.dx
 * (constant along a column); replaces `best` when strictly nearer, so the lowest k wins ties. */
KILN_KERNEL_FN void kiln_nearest_update(KilnSegment g, float ox, float ox_dx, float py, KilnNearest* best) {
  float oy = py - g.ay;
  float t = kiln_clampf((ox_dx + oy * g.dy) * g.inv_len2, 0.0f, 1.0f);
  float vx = ox - t * g.dx;
  float vy = oy - t * g.dy;
  float d2 = vx * vx + vy * vy;
  if (d2 < best->d2) {
    best->d2 = d2;
    best->vx = vx;
    best->vy = vy;
  }
}

/* CDF at s of the unit pixel square projected on a unit normal (a, b) = (big, small) / d, a >= b: uniform(a) +
 * uniform(b), a trapezoid on [-h2, h2] with flat top [-h1, h1]. Everything is scaled by d (S = s d, H = h d), so
 * one division serves: (s + h2)^2 / (2ab) = (S + H2)^2 / (2 big small) and s / a = S / big. */
KILN_KERNEL_FN float kiln_square_cdf_scaled(float s_scaled, float h1, float h2, float inv_big, float inv_2bs) {
  float s = kiln_clampf(s_scaled, -h2, h2);
  float lo = (s + h2) * (s + h2) * inv_2bs;
  float hi = 1.0f - (h2 - s) * (h2 - s) * inv_2bs;
  float lin = 0.5f + s * inv_big;
  return s < -h1 ? lo : (s > h1 ? hi : lin);
}

/* Coverage of a pixel by the stroke, from its nearest centre-line point: the area of the pixel square inside the
 * band of half-width r around the line through that point perpendicular to v (the tangent band of the stroke's
 * boundary there). Inside a segment v is the segment's normal, so straight runs are exact; at the end points it is
 * radial, which gives round caps and joins. `thin` (r < KILN_LINE_REACH_PAD) also subtracts the band's far edge,
 * which is exactly 0 for thicker lines. d and |v.x| count as at least 1e-4, which keeps a pixel centre on the line
 * defined and changes nothing farther than 0.1 px from it (there the 1e-3 floor of the smaller width dominates). */
KILN_KERNEL_FN float kiln_nearest_coverage(KilnNearest n, float r, int32_t thin) {
  float d = kiln_sqrtf(kiln_maxf(n.d2, 1e-8f));
  float ux = kiln_maxf(kiln_absf(n.vx), 1e-4f);
  float uy = kiln_absf(n.vy);
  float big = kiln_maxf(ux, uy);
  float small = kiln_maxf(kiln_minf(ux, uy), KILN_MIN_PROJ_B * d);
  float h1 = 0.5f * (big - small);
  float h2 = 0.5f * (big + small);
  float inv_2bs = 1.0f / (2.0f * big * small);
  float inv_big = 2.0f * small * inv_2bs;
  float near_edge = kiln_square_cdf_scaled((r - d) * d, h1, h2, inv_big, inv_2bs);
  float far_edge = thin ? kiln_square_cdf_scaled((-r - d) * d, h1, h2, inv_big, inv_2bs) : 0.0f;
  return near_edge - far_edge;
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

/* The rows [*top, *bottom] that sub-column `part` (0-2; 3 is the gap) of a bar covers. OHLC bars: the open tick, the
   high-low bar, the close tick. Candlesticks (candle != 0): the body from open to close in parts 0 and 2, the wick
   from high to low in part 1 (through the body), so the body is three sub-columns wide and the wick one. */
KILN_KERNEL_FN void kiln_bar_part_rows(int32_t part, int32_t candle, int32_t open_row, int32_t high_row,
                                       int32_t low_row, int32_t close_row, int32_t* top, int32_t* bottom) {
  if (part == 1) {
    *top = high_row;
    *bottom = low_row;
  } else if (candle) {
    *top = kiln_mini(open_row, close_row);
    *bottom = kiln_maxi(open_row, close_row);
  } else {
    *top = *bottom = part == 0 ? open_row : close_row;
  }
}

/* OHLC: sub-columns m that overlap pixel column c: [*m_lo, *m_hi]. */
KILN_KERNEL_FN void kiln_ohlc_sub_column_span(int32_t c, float sx, int32_t sub_columns, int32_t* m_lo,
                                              int32_t* m_hi) {
  *m_lo = kiln_maxi((int32_t)kiln_floorf((float)c / sx), 0);
  *m_hi = kiln_mini((int32_t)kiln_floorf((float)(c + 1) / sx), sub_columns - 1);
}

/* Layers: the column of day i, the pixel holding the centre of its high-low sub-column (bars; `parts` sub-columns a
 * day, each sx wide) or its point (line charts), clamped to the image. */
KILN_KERNEL_FN int32_t kiln_day_column(int32_t i, int32_t bars, int32_t parts, float sx, float x_step,
                                       int32_t width) {
  float x = bars ? ((float)(parts * i) + 1.5f) * sx : kiln_point_x(i, x_step) + 0.5f;
  return kiln_mini(kiln_maxi((int32_t)kiln_floorf(x), 0), width - 1);
}

/* Layers: the bottom rows of the volume panel (`rows` tall) that a volume v fills when the window's largest is
 * vmax: round(v * rows / vmax), halves up; none for v <= 0 or vmax <= 0. */
KILN_KERNEL_FN int32_t kiln_volume_rows(float v, float vmax, int32_t rows) {
  float per_unit;
  if (!(vmax > 0.0f) || !(v > 0.0f)) return 0;
  per_unit = (float)rows / vmax;
  return kiln_mini((int32_t)kiln_floorf(v * per_unit + 0.5f), rows);
}

/* Layers: day i is bullish (its volume bar in the bullish ink): close >= open with OHLC prices (ohlc != 0), else
 * close >= prev_close, the first day of a window (i == 0) always. */
KILN_KERNEL_FN int32_t kiln_day_bullish(int32_t ohlc, int32_t i, float open, float close, float prev_close) {
  if (ohlc) return close >= open ? 1 : 0;
  return (i == 0 || close >= prev_close) ? 1 : 0;
}

/* floor(a / b) for b > 0. */
KILN_KERNEL_FN int64_t kiln_floor_div64(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* Layers: the rows [*lo, *hi] (empty when lo > hi) of column c on the 1-px aliased segment from (x0, y0) to
 * (x1, y1), integer end points, x0 <= x1. A shallow segment (|dy| <= dx) has one pixel per column, at row
 * y0 + round(dy (c - x0) / dx); a steep one one pixel per row y0 + t sign(dy), t = 0..|dy|, at column
 * x0 + round(dx t / |dy|); halves round up. For a steep one the rows of column c are the t with
 * (2j - 1) |dy| <= 2 dx t < (2j + 1) |dy|, j = c - x0. */
KILN_KERNEL_FN void kiln_aliased_rows(int32_t c, int32_t x0, int32_t y0, int32_t x1, int32_t y1, int32_t* lo,
                                      int32_t* hi) {
  int64_t dx = (int64_t)x1 - x0;
  int64_t dy = (int64_t)y1 - y0;
  int64_t ady = dy < 0 ? -dy : dy;
  int64_t j = (int64_t)c - x0;
  int64_t t_lo = 0;
  int64_t t_hi = ady;
  *lo = 0;
  *hi = -1;
  if (c < x0 || c > x1) return;
  if (ady <= dx) {
    int32_t row = dx == 0 ? y0 : y0 + (int32_t)kiln_floor_div64(2 * dy * j + dx, 2 * dx);
    *lo = row;
    *hi = row;
    return;
  }
  if (dx > 0) {
    t_lo = -kiln_floor_div64(-(2 * j - 1) * ady, 2 * dx);
    t_hi = -kiln_floor_div64(-(2 * j + 1) * ady, 2 * dx) - 1;
    t_lo = t_lo < 0 ? 0 : t_lo;
    t_hi = t_hi > ady ? ady : t_hi;
  }
  if (t_lo > t_hi) return;
  if (dy < 0) {
    *lo = (int32_t)(y0 - t_hi);
    *hi = (int32_t)(y0 - t_lo);
  } else {
    *lo = (int32_t)(y0 + t_lo);
    *hi = (int32_t)(y0 + t_hi);
  }
}

#endif
