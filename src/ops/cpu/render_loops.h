// CPU loops around render_px.h. Included once per ISA variant (render_generic.cpp, render_avx2.cpp,
// render_scalar.cpp) inside a variant namespace; the compiler vectorizes the row blocks per variant.
// Every variant evaluates the same IEEE operations in the same order (no FMA contraction), so all produce
// byte-identical images.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kiln/ops/render.h"
#include "ops/render_px.h"

namespace {

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

struct LineScratch {
  std::vector<float> xs, ys;
  std::vector<KilnSegment> segments;
  std::vector<LineCandidate> candidates;
  std::vector<float> d2, vx, vy;  // nearest point per row; d2 then holds the coverage
  std::vector<LineBlock> blocks;
};

struct OhlcScratch {
  std::vector<int32_t> open_row, high_row, low_row, close_row;
  std::vector<float> bar_delta;  // ink - background per bar
  std::vector<float> accum;
};

template <typename Pixel>
inline void fill_image(Pixel* image, int64_t pixels, float background) {
  if constexpr (sizeof(Pixel) == 1) {
    std::memset(image, kiln_level_to_u8(background), static_cast<size_t>(pixels));
  } else {
    const float value = kiln_level_to_unit(background);
    for (int64_t i = 0; i < pixels; ++i) image[i] = value;
  }
}

template <typename Pixel>
inline Pixel level_to_pixel(float level) {
  if constexpr (sizeof(Pixel) == 1) {
    return kiln_level_to_u8(level);
  } else {
    return kiln_level_to_unit(level);
  }
}

#if defined(__AVX2__)
#include "ops/cpu/render_line_avx2.h"
#else
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

template <typename Pixel>
inline void shade_rows(const float* coverage, int32_t rows, float background, float ink, Pixel* lanes) {
  for (int32_t j = 0; j < rows; ++j) lanes[j] = level_to_pixel<Pixel>(kiln_shade(coverage[j], background, ink));
}
#endif

// Min and max of a window's values (stride = channels); false if any value is non-finite.
inline bool window_range(const float* values, int32_t count, int32_t stride, int32_t lanes, float* vmin,
                         float* vmax) {
  float lo = values[0];
  float hi = values[0];
  bool finite = true;
  for (int32_t i = 0; i < count; ++i) {
    for (int32_t lane = 0; lane < lanes; ++lane) {
      const float v = values[static_cast<int64_t>(i) * stride + lane];
      finite = finite && (v - v == 0.0f);
      lo = kiln_minf(lo, v);
      hi = kiln_maxf(hi, v);
    }
  }
  *vmin = lo;
  *vmax = hi;
  return finite;
}

template <typename Pixel>
void render_line_image(const kiln::RenderParams& p, const float* values, int32_t stride, int32_t n, Pixel* out,
                       LineScratch& s) {
  const int32_t w = p.width;
  const int32_t h = p.height;
  const float background = static_cast<float>(p.background);
  const float ink = static_cast<float>(p.ink);
  fill_image(out, static_cast<int64_t>(w) * h, background);

  float vmin = 0.0f;
  float vmax = 0.0f;
  // A window with NaN/inf has no defined shape: it stays blank (the planner never passes one).
  if (!window_range(values, n, stride, 1, &vmin, &vmax)) return;

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
  Pixel lanes[2 * kBlock];

  const auto flush = [&] {
    thin ? coverage_rows<1>(d2, vx, vy, used, r) : coverage_rows<0>(d2, vx, vy, used, r);
    for (const LineBlock& b : s.blocks) {
      shade_rows(d2 + b.lane, b.lanes, background, ink, lanes);
      Pixel* column = out + b.column;
      // Rows past the band are farther than the reach from every candidate: writing their (background) value
      // keeps the count fixed, so the branch predicts.
      const int32_t rows = kiln_mini(b.lanes, h - b.y0);
      for (int32_t j = 0; j < rows; ++j) column[static_cast<int64_t>(b.y0 + j) * w] = lanes[j];
    }
    s.blocks.clear();
    used = 0;
  };

  for (int32_t c = 0; c < w; ++c) {
    int32_t k_lo = 0;
    int32_t k_hi = -1;
    kiln_line_segment_span(c, reach, x_step, n, &k_lo, &k_hi);
    const float px = static_cast<float>(c);
    int32_t count = 0;
    int32_t band_lo = h;
    int32_t band_hi = -1;
    for (int32_t k = k_lo; k <= k_hi; ++k) {
      LineCandidate& candidate = candidates[count];
      kiln_line_segment_rows(c, reach, s.segments[k], h, &candidate.y_lo, &candidate.y_hi);
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

template <typename Pixel>
void render_ohlc_image(const kiln::RenderParams& p, const float* values, int32_t n, Pixel* out, OhlcScratch& s) {
  const int32_t w = p.width;
  const int32_t h = p.height;
  const float background = static_cast<float>(p.background);
  fill_image(out, static_cast<int64_t>(w) * h, background);

  float vmin = 0.0f;
  float vmax = 0.0f;
  if (!window_range(values, n, 4, 4, &vmin, &vmax)) return;

  s.open_row.resize(n);
  s.high_row.resize(n);
  s.low_row.resize(n);
  s.close_row.resize(n);
  s.bar_delta.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    const float* bar = values + static_cast<int64_t>(i) * 4;
    s.open_row[i] = kiln_ohlc_row(bar[0], vmin, vmax, h);
    s.high_row[i] = kiln_ohlc_row(bar[1], vmin, vmax, h);
    s.low_row[i] = kiln_ohlc_row(bar[2], vmin, vmax, h);
    s.close_row[i] = kiln_ohlc_row(bar[3], vmin, vmax, h);
    const float ink = static_cast<float>(bar[3] >= bar[0] ? p.ink_bullish : p.ink_bearish);
    s.bar_delta[i] = ink - background;
  }
  s.accum.assign(h, 0.0f);
  float* acc = s.accum.data();
  const int32_t sub_columns = 4 * n;
  const float sx = static_cast<float>(w) / static_cast<float>(sub_columns);

  for (int32_t c = 0; c < w; ++c) {
    int32_t m_lo = 0;
    int32_t m_hi = -1;
    kiln_ohlc_sub_column_span(c, sx, sub_columns, &m_lo, &m_hi);
    int32_t row_lo = h;
    int32_t row_hi = -1;
    for (int32_t m = m_lo; m <= m_hi; ++m) {
      const int32_t part = m & 3;
      if (part == 3) continue;
      const float f = kiln_ohlc_overlap(c, m, sx);
      if (!(f > 0.0f)) continue;
      const int32_t bar = m >> 2;
      const float delta = f * s.bar_delta[bar];
      int32_t top = s.open_row[bar];
      int32_t bottom = top;
      if (part == 1) {
        top = s.high_row[bar];
        bottom = s.low_row[bar];
      } else if (part == 2) {
        top = bottom = s.close_row[bar];
      }
      for (int32_t y = top; y <= bottom; ++y) acc[y] += delta;
      row_lo = kiln_mini(row_lo, top);
      row_hi = kiln_maxi(row_hi, bottom);
    }
    Pixel* column = out + c;
    for (int32_t y = row_lo; y <= row_hi; ++y) {
      column[static_cast<int64_t>(y) * w] = level_to_pixel<Pixel>(background + acc[y]);
      acc[y] = 0.0f;
    }
  }
}

template <typename Pixel>
void render_range(const kiln::RenderParams& p, const kiln::VarShapeBatchView& windows,
                  const kiln::VarShapeBatchView& images, int64_t begin, int64_t end) {
  thread_local LineScratch line_scratch;
  thread_local OhlcScratch ohlc_scratch;
  for (int64_t i = begin; i < end; ++i) {
    const kiln::ImageView& w = windows[i];
    const auto* window = static_cast<const float*>(w.data);
    auto* image = static_cast<Pixel*>(images[i].data);
    if (p.style == kiln::ChartStyle::kOhlc) {
      render_ohlc_image(p, window, w.width, image, ohlc_scratch);
    } else {
      const int32_t lane = w.channels == 4 ? 3 : 0;
      render_line_image(p, window + lane, w.channels, w.width, image, line_scratch);
    }
  }
}

}  // namespace

namespace kiln::KILN_RENDER_VARIANT {

void render_images(const RenderParams& params, const VarShapeBatchView& windows, const VarShapeBatchView& images,
                   int64_t begin, int64_t end) {
  if (params.dtype == PixelType::kU8) {
    render_range<uint8_t>(params, windows, images, begin, end);
  } else {
    render_range<float>(params, windows, images, begin, end);
  }
}

}  // namespace kiln::KILN_RENDER_VARIANT
