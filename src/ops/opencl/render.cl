/* OpenCL kernels of the render op, around the shared per-pixel math of render_px.h (embedded before this file,
 * with kernel_defs.h, by cmake/KilnEmbed.cmake; the program starts with #pragma OPENCL FP_CONTRACT OFF and is built
 * with -cl-fp32-correctly-rounded-divide-sqrt, so every operation is the IEEE one the CPU evaluates).
 *
 * One call renders a whole batch with two launches:
 *   render_prepare_kernel  one work-group per window: its first work-item finds the window's min, max and
 *                          finiteness in the CPU's order; then (line charts) the group builds the window's
 *                          segments with kiln_segment_make(), once, for every tile that needs them;
 *   render_line_kernel / render_ohlc_kernel
 *                          one work-item per (column, tile of KILN_TILE_ROWS rows, window), the whole batch in one
 *                          1-D launch (see kiln_tile_locate): finds the segments (sub-columns) that reach its
 *                          column, keeps each row's nearest segment point (line) or ink (OHLC) in private memory
 *                          and writes every pixel of its rows, background included (the price layer);
 *   render_layers_kernel   (volume or moving averages only) one work-item per (column, window): sets the ink
 *                          pixels of the volume bars and moving-average lines in its column.
 * Neighbouring work-items are neighbouring columns, so each row of a tile is one contiguous store per group, and
 * they read the same few segments.
 *
 * `series` holds the rows the batch spans, `channels` values per row; window b starts at row starts[b].
 * `out` is the packed (B, H, W) batch, u8 or f32 (as_float). */

#ifndef KILN_TILE_ROWS
#define KILN_TILE_ROWS 64
#endif

KILN_KERNEL_FN void kiln_store_level(__global uchar* out, long index, float level, int as_float) {
  if (as_float) {
    ((__global float*)out)[index] = kiln_level_to_unit(level);
  } else {
    out[index] = kiln_level_to_u8(level);
  }
}

/* Rows [y_lo, y_hi] of a column at `base` left at the background: the same values kiln_store_level() writes for
 * the shade of zero coverage (background + (ink - background) * 0 == background), converted once. */
KILN_KERNEL_FN void kiln_store_background(__global uchar* out, long base, int width, int y_lo, int y_hi,
                                          float background, int as_float) {
  if (as_float) {
    const float value = kiln_level_to_unit(background);
    for (int y = y_lo; y <= y_hi; ++y) ((__global float*)out)[base + (long)y * width] = value;
  } else {
    const uchar value = kiln_level_to_u8(background);
    for (int y = y_lo; y <= y_hi; ++y) out[base + (long)y * width] = value;
  }
}

/* Work-group g of the 1-D render launch covers columns [cb * L, cb * L + L) (L = local size) of row tile t of
 * window b, with g = (b * tiles + t) * column_blocks + cb: a 1-D range has no per-dimension group limits. */
KILN_KERNEL_FN void kiln_tile_locate(int width, int height, int* c, int* y0, int* b) {
  const long group_size = (long)get_local_size(0);
  const long column_blocks = ((long)width + group_size - 1) / group_size;
  const long tiles = ((long)height + KILN_TILE_ROWS - 1) / KILN_TILE_ROWS;
  const long g = (long)get_group_id(0);
  const long rest = g / column_blocks;
  *c = (int)((g - rest * column_blocks) * group_size + (long)get_local_id(0));
  *y0 = (int)(rest % tiles) * KILN_TILE_ROWS;
  *b = (int)(rest / tiles);
}

/* The host sizes the segment buffer with its own sizeof(KilnSegment), passed as KILN_SEGMENT_BYTES. */
#ifdef KILN_SEGMENT_BYTES
typedef char kiln_segment_size_check[sizeof(KilnSegment) == KILN_SEGMENT_BYTES ? 1 : -1];
#endif

/* Window b = get_group_id(0): ranges[b] = (min, max, finite ? 1 : 0, 0) over `lanes` values per row from lane
 * `lane`, rows in order and lanes within a row in order, then each of the `averages` lanes from `average_lane`
 * (min and max extended), exactly as the CPU's chart_range(); finite also covers the volume lane (`volume_lane`,
 * -1 for none). With `segments` (line charts of finite windows): segments[b * (seq_len - 1) + k] = the CPU's
 * segment k, scaled to the `height` price rows. */
__kernel void render_prepare_kernel(__global const float* series, __global const long* starts, int seq_len,
                                    int channels, int lane, int lanes, int volume_lane, int average_lane,
                                    int averages, int width, int height, __global float4* ranges,
                                    __global KilnSegment* segments) {
  const int b = (int)get_group_id(0);
  const int id = (int)get_local_id(0);
  __global const float* row0 = series + starts[b] * channels;
  __global const float* values = row0 + lane;
  __local float4 shared_range;
  if (id == 0) {
    float lo = values[0];
    float hi = values[0];
    int finite = 1;
    for (int i = 0; i < seq_len; ++i) {
      for (int l = 0; l < lanes; ++l) {
        const float v = values[(long)i * channels + l];
        finite = finite && (v - v == 0.0f);
        lo = kiln_minf(lo, v);
        hi = kiln_maxf(hi, v);
      }
    }
    if (volume_lane >= 0) {
      for (int i = 0; i < seq_len; ++i) {
        const float v = row0[(long)i * channels + volume_lane];
        finite = finite && (v - v == 0.0f);
      }
    }
    for (int m = 0; m < averages; ++m) {
      __global const float* average = row0 + average_lane + m;
      float a_lo = average[0];
      float a_hi = average[0];
      for (int i = 0; i < seq_len; ++i) {
        const float v = average[(long)i * channels];
        finite = finite && (v - v == 0.0f);
        a_lo = kiln_minf(a_lo, v);
        a_hi = kiln_maxf(a_hi, v);
      }
      lo = kiln_minf(lo, a_lo);
      hi = kiln_maxf(hi, a_hi);
    }
    const float4 range = (float4)(lo, hi, finite ? 1.0f : 0.0f, 0.0f);
    ranges[b] = range;
    shared_range = range;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const float4 range = shared_range;
  if (segments == 0 || range.z == 0.0f) return;
  const float x_step = kiln_line_x_step(width, seq_len);
  const int count = seq_len - 1;
  for (int k = id; k < count; k += (int)get_local_size(0)) {
    const float x0 = kiln_point_x(k, x_step);
    const float y0 = kiln_point_y(values[(long)k * channels], range.x, range.y, height);
    const float x1 = kiln_point_x(k + 1, x_step);
    const float y1 = kiln_point_y(values[(long)(k + 1) * channels], range.x, range.y, height);
    segments[(long)b * count + k] = kiln_segment_make(x0, y0, x1, y1);
  }
}

/* Line chart: pixel value = kiln_nearest_coverage() of the nearest point over the segments k of
 * kiln_line_segment_span(c) whose kiln_line_segment_rows(c) contain y (kiln_nearest_update, increasing k), shaded;
 * background where none does and for non-finite windows. */
__kernel void render_line_kernel(__global const float4* ranges, __global const KilnSegment* segments, int seq_len,
                                 int width, int height, int price_height, float line_width, float background,
                                 float ink, int as_float, __global uchar* out) {
  int c = 0;
  int y0 = 0;
  int b = 0;
  kiln_tile_locate(width, height, &c, &y0, &b);
  if (c >= width) return;
  const int y1 = kiln_mini(y0 + KILN_TILE_ROWS, height) - 1;

  KilnNearest nearest[KILN_TILE_ROWS];
  for (int j = 0; j < KILN_TILE_ROWS; ++j) nearest[j] = kiln_nearest_none();
  int band_lo = y1 + 1; /* rows some segment reaches; the others are background (the shade of 0 coverage) */
  int band_hi = y0 - 1;
  const float r = 0.5f * line_width;

  if (ranges[b].z != 0.0f) {
    __global const KilnSegment* window = segments + (long)b * (seq_len - 1);
    const float x_step = kiln_line_x_step(width, seq_len);
    const float reach = r + KILN_LINE_REACH_PAD;
    const float px = (float)c;
    int k_lo = 0;
    int k_hi = -1;
    kiln_line_segment_span(c, reach, x_step, seq_len, &k_lo, &k_hi);
    for (int k = k_lo; k <= k_hi; ++k) {
      const KilnSegment g = window[k];
      int y_lo = 0;
      int y_hi = -1;
      kiln_line_segment_rows(c, reach, g, price_height, &y_lo, &y_hi);
      y_lo = kiln_maxi(y_lo, y0);
      y_hi = kiln_mini(y_hi, y1);
      if (y_lo > y_hi) continue;
      band_lo = kiln_mini(band_lo, y_lo);
      band_hi = kiln_maxi(band_hi, y_hi);
      const float ox = px - g.ax;
      const float ox_dx = ox * g.dx;
      for (int y = y_lo; y <= y_hi; ++y) kiln_nearest_update(g, ox, ox_dx, (float)y, &nearest[y - y0]);
    }
  }

  const long base = (long)b * width * height + c;
  if (band_lo > band_hi) { /* no segment reaches the tile */
    band_lo = y1 + 1;
    band_hi = y1;
  }
  kiln_store_background(out, base, width, y0, band_lo - 1, background, as_float);
  for (int y = band_lo; y <= band_hi; ++y) {
    const float coverage = kiln_nearest_coverage(nearest[y - y0], r, r < KILN_LINE_REACH_PAD);
    kiln_store_level(out, base + (long)y * width, kiln_shade(coverage, background, ink), as_float);
  }
  kiln_store_background(out, base, width, band_hi + 1, y1, background, as_float);
}

/* OHLC bars and candlesticks: pixel value = background + the sum, in increasing sub-column order, of overlap *
 * (ink - background) over the sub-columns (kiln_bar_part_rows; gaps and zero overlaps skipped) containing it.
 * `parts` sub-columns a day (4 with the gap); rows scaled to the `price_height` price rows. */
__kernel void render_ohlc_kernel(__global const float* series, __global const long* starts,
                                 __global const float4* ranges, int seq_len, int channels, int parts, int width,
                                 int height, int price_height, float background, float ink_bullish,
                                 float ink_bearish, int candle, int as_float, __global uchar* out) {
  int c = 0;
  int y0 = 0;
  int b = 0;
  kiln_tile_locate(width, height, &c, &y0, &b);
  if (c >= width) return;
  const int y1 = kiln_mini(y0 + KILN_TILE_ROWS, height) - 1;

  float acc[KILN_TILE_ROWS];
  for (int j = 0; j < KILN_TILE_ROWS; ++j) acc[j] = 0.0f;

  const float4 range = ranges[b];
  if (range.z != 0.0f) {
    __global const float* bars = series + starts[b] * channels;
    const float vmin = range.x;
    const float vmax = range.y;
    const int ph = price_height;
    const int sub_columns = parts * seq_len;
    const float sx = (float)width / (float)sub_columns;
    int m_lo = 0;
    int m_hi = -1;
    kiln_ohlc_sub_column_span(c, sx, sub_columns, &m_lo, &m_hi);
    for (int m = m_lo; m <= m_hi; ++m) {
      const int day = m / parts;
      const int part = m - day * parts;
      if (part == 3) continue;
      const float f = kiln_ohlc_overlap(c, m, sx);
      if (!(f > 0.0f)) continue;
      __global const float* bar = bars + (long)day * channels;
      const float bar_ink = bar[3] >= bar[0] ? ink_bullish : ink_bearish;
      const float delta = f * (bar_ink - background);
      int top = 0;
      int bottom = 0;
      kiln_bar_part_rows(part, candle, kiln_ohlc_row(bar[0], vmin, vmax, ph), kiln_ohlc_row(bar[1], vmin, vmax, ph),
                         kiln_ohlc_row(bar[2], vmin, vmax, ph), kiln_ohlc_row(bar[3], vmin, vmax, ph), &top,
                         &bottom);
      top = kiln_maxi(top, y0);
      bottom = kiln_mini(bottom, y1);
      for (int y = top; y <= bottom; ++y) acc[y - y0] += delta;
    }
  }

  const long base = (long)b * width * height + c;
  for (int y = y0; y <= y1; ++y) {
    kiln_store_level(out, base + (long)y * width, background + acc[y - y0], as_float);
  }
}

/* Volume bars and moving-average lines (render_px.h, "Layers"), over the price layer the previous launch wrote:
 * work-item (c, b) = (id % width, id / width) sets the ink pixels of column c of window b. */
__kernel void render_layers_kernel(__global const float* series, __global const long* starts,
                                   __global const float4* ranges, int count, int seq_len, int channels, int bars,
                                   int parts, int width, int height, int price_height, int volume_lane,
                                   int volume_rows, int average_lane, int averages, float volume_up,
                                   float volume_down, uchar16 average_inks, int as_float, __global uchar* out) {
  const long id = (long)get_global_id(0);
  if (id >= (long)count * width) return;
  const int c = (int)(id % width);
  const int b = (int)(id / width);
  const float4 range = ranges[b];
  if (range.z == 0.0f) return;
  __global const float* window = series + starts[b] * channels;
  const float sx = (float)width / (float)(parts * seq_len);
  const float x_step = kiln_line_x_step(width, seq_len);
  const long base = (long)b * width * height + c;
  uchar ma_inks[16];
  vstore16(average_inks, 0, ma_inks);
  if (volume_lane >= 0) {
    const int close = volume_lane - 1; /* the volume follows the prices */
    float largest = 0.0f;
    for (int i = 0; i < seq_len; ++i) largest = kiln_maxf(largest, window[(long)i * channels + volume_lane]);
    for (int i = 0; i < seq_len; ++i) {
      if (kiln_day_column(i, bars, parts, sx, x_step, width) != c) continue;
      __global const float* day = window + (long)i * channels;
      const float prev_close = i > 0 ? day[close - channels] : day[close];
      const float ink = kiln_day_bullish(volume_lane == 4, i, day[0], day[close], prev_close) ? volume_up : volume_down;
      const int filled = kiln_volume_rows(day[volume_lane], largest, volume_rows);
      for (int y = height - filled; y < height; ++y) kiln_store_level(out, base + (long)y * width, ink, as_float);
    }
  }
  for (int m = 0; m < averages; ++m) {
    __global const float* average = window + average_lane + m;
    const float ink = (float)ma_inks[m];
    int x0 = kiln_day_column(0, bars, parts, sx, x_step, width);
    int y0 = kiln_ohlc_row(average[0], range.x, range.y, price_height);
    for (int k = 1; k < seq_len; ++k) {
      const int x1 = kiln_day_column(k, bars, parts, sx, x_step, width);
      if (x0 > c) break;
      const int y1 = kiln_ohlc_row(average[(long)k * channels], range.x, range.y, price_height);
      if (x1 >= c) {
        int lo = 0;
        int hi = -1;
        kiln_aliased_rows(c, x0, y0, x1, y1, &lo, &hi);
        for (int y = lo; y <= hi; ++y) kiln_store_level(out, base + (long)y * width, ink, as_float);
      }
      x0 = x1;
      y0 = y1;
    }
  }
}
