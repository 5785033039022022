// CPU loops around render_px.h. Included once per ISA variant (render_generic.cpp, render_avx2.cpp,
// render_scalar.cpp) inside a variant namespace; the compiler vectorizes the row loops per variant.
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
constexpr int32_t kMaxSegmentsPerColumn = 16;

// Per segment: how t (the projection parameter) changes per row, to find the interior rows of a column.
struct InteriorStep {
  float rows_per_t;  // 1 / (dy / |d|^2): rows per unit of t; 0 when t does not depend on the row
};

inline InteriorStep interior_step(const KilnSegment& g) {
  const float t_per_row = g.dy * g.inv_len2;
  return {t_per_row != 0.0f ? 1.0f / t_per_row : 0.0f};
}

// Rows [*first, *last] of [y_lo, y_hi] in column px where segment g is certainly interior (0 < t < 1), so the
// interior formula equals kiln_capsule_coverage there; an empty range is returned as first = y_hi + 1,
// last = y_hi. The analytic bounds are shrunk by a margin in t and by one row, which covers any float rounding in
// computing them, and clamped before conversion (nearly horizontal segments give huge or infinite bounds).
inline void interior_rows(const KilnSegment& g, const InteriorStep& step, float px, int32_t y_lo, int32_t y_hi,
                          int32_t* first, int32_t* last) {
  constexpr float kMargin = 1e-3f;
  const float t0 = ((px - g.ax) * g.dx - g.ay * g.dy) * g.inv_len2;  // t at row 0
  const float row_lo = static_cast<float>(y_lo);
  const float row_hi = static_cast<float>(y_hi);
  float lo = row_lo;
  float hi = row_hi;
  if (step.rows_per_t == 0.0f) {
    if (!(t0 > kMargin && t0 < 1.0f - kMargin)) hi = lo - 1.0f;
  } else {
    float a = (kMargin - t0) * step.rows_per_t;
    float b = (1.0f - kMargin - t0) * step.rows_per_t;
    if (a > b) std::swap(a, b);
    if (a != a || b != b) a = b = row_hi + 2.0f;  // NaN (0 * inf): claim nothing; the cap formula is always exact
    lo = std::max(lo, std::ceil(a) + 1.0f);
    hi = std::min(hi, std::floor(b) - 1.0f);
  }
  if (!(lo <= hi)) {  // also catches NaN bounds
    *first = y_hi + 1;
    *last = y_hi;
    return;
  }
  *first = static_cast<int32_t>(std::clamp(lo, row_lo, row_hi));
  *last = static_cast<int32_t>(std::clamp(hi, row_lo, row_hi));
}

struct LineScratch {
  std::vector<float> xs, ys;
  std::vector<KilnSegment> segments;
  std::vector<InteriorStep> steps;
  std::vector<float> coverage;
};

struct OhlcScratch {
  std::vector<int32_t> open_row, high_row, low_row, close_row;
  std::vector<float> bar_delta;  // ink - background per bar
  std::vector<float> accum;
};

// kBlock rows of one column, max-combined into `block`: the canonical per-pixel coverage ...
inline void cap_block(const KilnSegment& g, float px, int32_t y0, float r, float* block) {
  const float fy = static_cast<float>(y0);
  for (int32_t j = 0; j < kBlock; ++j) {
    const float value = kiln_capsule_coverage(g, px, fy + static_cast<float>(j), r);
    block[j] = block[j] > value ? block[j] : value;
  }
}

// ... or, for rows known to be interior, the cheap formula that equals it there.
template <int32_t kThin>
inline void interior_block(const KilnSegment& g, float px, int32_t y0, float r, float* block) {
  const float fy = static_cast<float>(y0);
  for (int32_t j = 0; j < kBlock; ++j) {
    const float value = kiln_coverage_interior(g, px, fy + static_cast<float>(j), r, kThin);
    block[j] = block[j] > value ? block[j] : value;
  }
}

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
  s.steps.resize(segments);
  for (int32_t k = 0; k < segments; ++k) {
    s.segments[k] = kiln_segment_make(s.xs[k], s.ys[k], s.xs[k + 1], s.ys[k + 1]);
    s.steps[k] = interior_step(s.segments[k]);
  }
  // Rows are processed in blocks of kBlock (one or two SIMD vectors); the column buffer is padded so a block may
  // run past the band or the image. Rows outside every segment's conservative range have zero coverage, so the
  // extra values change nothing, and only [band_lo, band_hi] is written out.
  s.coverage.resize(static_cast<size_t>(h) + kBlock);
  float* cov = s.coverage.data();
  const int32_t thin = r < KILN_LINE_REACH_PAD;
  int32_t seg_lo[kMaxSegmentsPerColumn];
  int32_t seg_hi[kMaxSegmentsPerColumn];

  for (int32_t c = 0; c < w; ++c) {
    int32_t k_lo = 0;
    int32_t k_hi = -1;
    kiln_line_segment_span(c, reach, x_step, n, &k_lo, &k_hi);
    int32_t band_lo = h;
    int32_t band_hi = -1;
    const bool cached = k_hi - k_lo < kMaxSegmentsPerColumn;
    for (int32_t k = k_lo; k <= k_hi; ++k) {
      int32_t y_lo = 0;
      int32_t y_hi = -1;
      kiln_line_segment_rows(c, reach, s.segments[k], h, &y_lo, &y_hi);
      if (cached) {
        seg_lo[k - k_lo] = y_lo;
        seg_hi[k - k_lo] = y_hi;
      }
      if (y_lo <= y_hi) {
        band_lo = kiln_mini(band_lo, y_lo);
        band_hi = kiln_maxi(band_hi, y_hi);
      }
    }
    if (band_lo > band_hi) continue;
    for (int32_t y = band_lo; y < band_hi + kBlock; ++y) cov[y] = 0.0f;
    const float px = static_cast<float>(c);
    for (int32_t k = k_lo; k <= k_hi; ++k) {
      int32_t y_lo = 0;
      int32_t y_hi = -1;
      if (cached) {
        y_lo = seg_lo[k - k_lo];
        y_hi = seg_hi[k - k_lo];
      } else {
        kiln_line_segment_rows(c, reach, s.segments[k], h, &y_lo, &y_hi);
      }
      if (y_lo > y_hi) continue;
      const KilnSegment g = s.segments[k];
      int32_t in_lo = 0;
      int32_t in_hi = -1;
      // Blocks start at y_lo and may run up to kBlock - 1 rows past y_hi (the buffer is padded); a block uses the
      // cheap interior formula when all its rows are interior, else the full capsule formula.
      interior_rows(g, s.steps[k], px, y_lo, y_hi + kBlock - 1, &in_lo, &in_hi);
      for (int32_t y0 = y_lo; y0 <= y_hi; y0 += kBlock) {
        if (y0 < in_lo || y0 + kBlock - 1 > in_hi) {
          cap_block(g, px, y0, r, cov + y0);
        } else if (thin) {
          interior_block<1>(g, px, y0, r, cov + y0);
        } else {
          interior_block<0>(g, px, y0, r, cov + y0);
        }
      }
    }
    Pixel* column = out + c;
    for (int32_t y = band_lo; y <= band_hi; ++y) {
      column[static_cast<int64_t>(y) * w] = level_to_pixel<Pixel>(kiln_shade(cov[y], background, ink));
    }
  }
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
