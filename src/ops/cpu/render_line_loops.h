// Line-chart loops of the CPU renderer, included by render_loops.h once per ISA variant (inside its unnamed
// namespace, after fill_image, level_to_pixel and window_range).
constexpr int32_t kBlock = 8;

// A segment that can touch the current column, with what is constant along the column.
struct LineCandidate {
  KilnSegment g;
  float ox;     // column - g.ax
  float ox_dx;  // ox * g.dx
  int32_t y_lo, y_hi;
};

// Rows [y0, y0 + lanes) of a column, whose nearest points (then coverage) sit at [lane, lane + lanes) of the
// scratch arrays.
struct LineBlock {
  int32_t column, y0, lane, lanes;
};

// Columns are rendered in chunks of about kChunkLanes rows in three passes: the nearest point of every row (scalar
// setup per column, short vector loops), then the coverage of all of them in one flat loop (the square roots and
// divisions of neighbouring blocks overlap), then the pixels.
constexpr int32_t kChunkLanes = 2048;

// Above this many (segment, column) pairs (windows much longer than the image is wide) the rows are computed per
// column with kiln_line_segment_rows() instead of kept in a table, so memory stays bounded.
constexpr int64_t kMaxRowTable = int64_t{1} << 22;

// Columns [first, last] that a segment can touch; its rows in column c are at offset + c - first of the row arrays.
struct SegmentColumns {
  int32_t first, last, offset;
};

struct LineScratch {
  std::vector<float> xs, ys;
  std::vector<KilnSegment> segments;
  std::vector<SegmentColumns> columns;
  std::vector<int32_t> rows_lo, rows_hi;
  std::vector<LineCandidate> candidates;
  std::vector<float> d2, vx, vy;  // nearest point per row; d2 then holds the coverage
  std::vector<LineBlock> blocks;
};

// Half-height of the band around a segment's line (dx > 0) that holds every pixel within the reach of the segment:
// reach * |d| / dx, with a margin for the rounding of the band and of the line's y at a column.
inline float segment_band_half(const KilnSegment& g, float reach) {
  return reach * std::sqrt(1.0f + g.slope * g.slope) * 1.001f + 0.01f * std::abs(g.slope) + 0.125f;
}

#if defined(__AVX2__)
#include "ops/cpu/render_line_avx2.h"
#else
// Rows of columns [first, last] that segment g can touch: the rows of kiln_line_segment_rows() (the bounding box of
// the segment's part within the reach of the column, plus the reach), narrowed to the band around the segment's
// line that holds every pixel within the reach of it (segment_band_half). Any superset of the rows within the reach
// gives the same image; the AVX2 variant computes the same bounds 8 columns at a time.
inline void segment_rows(const KilnSegment& g, int32_t first, int32_t last, float reach, int32_t h, int32_t* lo,
                         int32_t* hi) {
  if (!(g.dx > 0.0f)) {  // all points share one column (width 1)
    for (int32_t c = first; c <= last; ++c) kiln_line_segment_rows(c, reach, g, h, &lo[c - first], &hi[c - first]);
    return;
  }
  const float band_half = segment_band_half(g, reach);
  const float x1 = g.ax + g.dx;
  const float top_row = -1.0f;
  const float bottom_row = static_cast<float>(h);
  for (int32_t c = first; c <= last; ++c) {
    const float cx = static_cast<float>(c);
    const float xa = kiln_maxf(g.ax, cx - reach);
    const float xb = kiln_minf(x1, cx + reach);
    const float ya = g.ay + (xa - g.ax) * g.slope;
    const float yb = g.ay + (xb - g.ax) * g.slope;
    const float line_y = g.ay + (cx - g.ax) * g.slope;
    const float top = kiln_maxf(kiln_minf(ya, yb) - reach, line_y - band_half);
    const float bottom = xa > xb ? top_row : kiln_minf(kiln_maxf(ya, yb) + reach, line_y + band_half);
    lo[c - first] = static_cast<int32_t>(kiln_clampf(std::ceil(top), 0.0f, bottom_row));
    hi[c - first] = static_cast<int32_t>(kiln_clampf(std::floor(bottom), top_row, bottom_row - 1.0f));
  }
}

// kiln_nearest_update over the candidates whose rows meet rows [y0, y0 + kVectors * kBlock) of a column (in
// increasing k), written lane by lane so that the loops vectorize.
template <int32_t kVectors>
inline void nearest_rows(const LineCandidate* candidates, int32_t count, int32_t y0, float* best_d2, float* best_vx,
                         float* best_vy) {
  constexpr int32_t kRows = kVectors * kBlock;
  for (int32_t j = 0; j < kRows; ++j) {
    best_d2[j] = KILN_NEAREST_NONE_D2;
    best_vx[j] = KILN_NEAREST_NONE_VX;
    best_vy[j] = 0.0f;
  }
  const float fy = static_cast<float>(y0);
  for (int32_t i = 0; i < count; ++i) {
    const LineCandidate& c = candidates[i];
    if (c.y_hi < y0 || c.y_lo > y0 + kRows - 1) continue;
    const KilnSegment g = c.g;
    for (int32_t j = 0; j < kRows; ++j) {
      const float oy = (fy + static_cast<float>(j)) - g.ay;
      const float t = kiln_clampf((c.ox_dx + oy * g.dy) * g.inv_len2, 0.0f, 1.0f);
      const float vx = c.ox - t * g.dx;
      const float vy = oy - t * g.dy;
      const float d2 = vx * vx + vy * vy;
      const bool nearer = d2 < best_d2[j];
      best_d2[j] = nearer ? d2 : best_d2[j];
      best_vx[j] = nearer ? vx : best_vx[j];
      best_vy[j] = nearer ? vy : best_vy[j];
    }
  }
}

// kiln_nearest_coverage of `lanes` rows, written over d2.
template <int32_t kThin>
inline void coverage_rows(float* d2, const float* vx, const float* vy, int32_t lanes, float r) {
  for (int32_t j = 0; j < lanes; ++j) {
    KilnNearest n;
    n.d2 = d2[j];
    n.vx = vx[j];
    n.vy = vy[j];
    d2[j] = kiln_nearest_coverage(n, r, kThin);
  }
}

// The first `rows` of `lanes` coverage values, shaded, down a column from p.
template <typename Pixel>
inline void write_rows(const float* coverage, [[maybe_unused]] int32_t lanes, int32_t rows, float background, float ink,
                       Pixel* p, int64_t stride) {
  for (int32_t j = 0; j < rows; ++j) p[j * stride] = level_to_pixel<Pixel>(kiln_shade(coverage[j], background, ink));
}
#endif

// Draws into the top h rows of `out` (already background), scaled to [vmin, vmax].
template <typename Pixel>
void render_line_image(const kiln::RenderParams& p, const float* values, int32_t stride, int32_t n, int32_t h,
                       float vmin, float vmax, Pixel* out, LineScratch& s) {
  const int32_t w = p.width;
  const float background = static_cast<float>(p.background);
  const float ink = static_cast<float>(p.ink);

  const float x_step = kiln_line_x_step(w, n);
  const float r = 0.5f * p.line_width;
  const float reach = r + KILN_LINE_REACH_PAD;
  s.xs.resize(n);
  s.ys.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    s.xs[i] = kiln_point_x(i, x_step);
    s.ys[i] = kiln_point_y(values[static_cast<int64_t>(i) * stride], vmin, vmax, h);
  }
  const int32_t segments = n - 1;
  s.segments.resize(segments);
  for (int32_t k = 0; k < segments; ++k) {
    s.segments[k] = kiln_segment_make(s.xs[k], s.ys[k], s.xs[k + 1], s.ys[k + 1]);
  }
  // Columns each segment can touch (one more on each side than the reach, against rounding) and its rows there.
  s.columns.resize(segments);
  int64_t total = 0;
  for (int32_t k = 0; k < segments; ++k) {
    const KilnSegment& g = s.segments[k];
    const float first = std::ceil(kiln_minf(g.ax, g.ax + g.dx) - reach) - 1.0f;
    const float last = std::floor(kiln_maxf(g.ax, g.ax + g.dx) + reach) + 1.0f;
    s.columns[k].first = static_cast<int32_t>(kiln_clampf(first, 0.0f, static_cast<float>(w)));
    s.columns[k].last = static_cast<int32_t>(kiln_clampf(last, -1.0f, static_cast<float>(w - 1)));
    s.columns[k].offset = total <= kMaxRowTable ? static_cast<int32_t>(total) : 0;
    total += kiln_maxi(s.columns[k].last - s.columns[k].first + 1, 0);
  }
  const bool tabled = total <= kMaxRowTable;
  if (tabled) {
    s.rows_lo.resize(total + kBlock);  // segment_rows may write up to kBlock - 1 columns past a segment's last
    s.rows_hi.resize(total + kBlock);
    for (int32_t k = 0; k < segments; ++k) {
      const SegmentColumns& sc = s.columns[k];
      segment_rows(s.segments[k], sc.first, sc.last, reach, h, &s.rows_lo[sc.offset], &s.rows_hi[sc.offset]);
    }
  }

  s.candidates.resize(segments);
  LineCandidate* candidates = s.candidates.data();
  const bool thin = r < KILN_LINE_REACH_PAD;
  const int32_t capacity = kiln_maxi(kChunkLanes, h + 2 * kBlock);
  s.d2.resize(capacity);
  s.vx.resize(capacity);
  s.vy.resize(capacity);
  float* d2 = s.d2.data();
  float* vx = s.vx.data();
  float* vy = s.vy.data();
  int32_t used = 0;

  const auto flush = [&] {
    thin ? coverage_rows<1>(d2, vx, vy, used, r) : coverage_rows<0>(d2, vx, vy, used, r);
    for (const LineBlock& b : s.blocks) {
      // Rows past the band are farther than the reach from every candidate: writing their (background) value
      // keeps the count fixed, so the branches predict.
      const int32_t rows = kiln_mini(b.lanes, h - b.y0);
      write_rows(d2 + b.lane, b.lanes, rows, background, ink, out + static_cast<int64_t>(b.y0) * w + b.column, w);
    }
    s.blocks.clear();
    used = 0;
  };

  // Segments are ordered by x, so first and last grow with k and the segments that can touch column c are the
  // window [k_begin, k_end).
  int32_t k_begin = 0;
  int32_t k_end = 0;
  for (int32_t c = 0; c < w; ++c) {
    while (k_begin < segments && s.columns[k_begin].last < c) ++k_begin;
    while (k_end < segments && s.columns[k_end].first <= c) ++k_end;
    const float px = static_cast<float>(c);
    int32_t count = 0;
    int32_t band_lo = h;
    int32_t band_hi = -1;
    for (int32_t k = k_begin; k < k_end; ++k) {
      const SegmentColumns& sc = s.columns[k];
      if (c > sc.last) continue;
      LineCandidate& candidate = candidates[count];
      if (tabled) {
        candidate.y_lo = s.rows_lo[sc.offset + c - sc.first];
        candidate.y_hi = s.rows_hi[sc.offset + c - sc.first];
      } else {
        kiln_line_segment_rows(c, reach, s.segments[k], h, &candidate.y_lo, &candidate.y_hi);
      }
      if (candidate.y_lo > candidate.y_hi) continue;
      candidate.g = s.segments[k];
      candidate.ox = px - candidate.g.ax;
      candidate.ox_dx = candidate.ox * candidate.g.dx;
      band_lo = kiln_mini(band_lo, candidate.y_lo);
      band_hi = kiln_maxi(band_hi, candidate.y_hi);
      ++count;
    }
    if (count == 0) continue;
    if (used + (band_hi - band_lo + 1) + 2 * kBlock > capacity) flush();
    for (int32_t y0 = band_lo; y0 <= band_hi;) {
      if (band_hi - y0 >= kBlock) {
        nearest_rows<2>(candidates, count, y0, d2 + used, vx + used, vy + used);
        s.blocks.push_back({c, y0, used, 2 * kBlock});
      } else {
        nearest_rows<1>(candidates, count, y0, d2 + used, vx + used, vy + used);
        s.blocks.push_back({c, y0, used, kBlock});
      }
      used += s.blocks.back().lanes;
      y0 += s.blocks.back().lanes;
    }
  }
  flush();
}
