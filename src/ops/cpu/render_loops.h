// CPU loops around render_px.h. Included once per ISA variant (render_generic.cpp, render_avx2.cpp,
// render_scalar.cpp) inside a variant namespace; the line-chart row loops (render_line_loops.h) are scalar code the
// compiler vectorizes, or AVX2 intrinsics in the avx2 variant (render_line_avx2.h).
// Every variant evaluates the same IEEE operations in the same order (no FMA contraction), so all produce
// byte-identical images.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kiln/ops/render.h"
#include "ops/cpu/render_aliased.h"
#include "ops/render_px.h"

namespace {

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
#include "ops/cpu/render_line_loops.h"
#include "ops/cpu/render_spans.h"

#if defined(KILN_RENDER_REFERENCE)
constexpr bool kSpanPath = false;  // the scalar reference draws every chart with the general loops
#else
constexpr bool kSpanPath = true;
#endif

// Draws into the top h rows of `out` (already background), scaled to [vmin, vmax]; `channels` values a day.
template <typename Pixel>
void render_ohlc_image(const kiln::RenderParams& p, const float* values, int32_t channels, int32_t n, int32_t h,
                       float vmin, float vmax, Pixel* out, OhlcScratch& s) {
  const int32_t w = p.width;
  const float background = static_cast<float>(p.background);

  s.open_row.resize(n);
  s.high_row.resize(n);
  s.low_row.resize(n);
  s.close_row.resize(n);
  s.bar_delta.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    const float* bar = values + static_cast<int64_t>(i) * channels;
    s.open_row[i] = kiln_ohlc_row(bar[0], vmin, vmax, h);
    s.high_row[i] = kiln_ohlc_row(bar[1], vmin, vmax, h);
    s.low_row[i] = kiln_ohlc_row(bar[2], vmin, vmax, h);
    s.close_row[i] = kiln_ohlc_row(bar[3], vmin, vmax, h);
    const float ink = static_cast<float>(bar[3] >= bar[0] ? p.ink_bullish : p.ink_bearish);
    s.bar_delta[i] = ink - background;
  }
  s.accum.assign(h, 0.0f);
  float* acc = s.accum.data();
  const int32_t candle = p.style == kiln::ChartStyle::kCandlestick ? 1 : 0;
  const int32_t parts = p.bar_gap ? 4 : 3;
  const int32_t sub_columns = parts * n;
  const float sx = static_cast<float>(w) / static_cast<float>(sub_columns);

  if (w == sub_columns) {
    // One pixel column per sub-column (JKX's 3 px a day): column c is exactly sub-column c (overlap 1, the next
    // sub-column's 0), so each pixel of its rows is background + 1 * (ink - background), as the general loop sums.
    for (int32_t bar = 0; bar < n; ++bar) {
      const Pixel value = level_to_pixel<Pixel>(background + s.bar_delta[bar]);
      for (int32_t part = 0; part < 3; ++part) {  // part 3, the gap, stays background
        int32_t top = 0;
        int32_t bottom = 0;
        kiln_bar_part_rows(part, candle, s.open_row[bar], s.high_row[bar], s.low_row[bar], s.close_row[bar], &top,
                           &bottom);
        Pixel* column = out + bar * parts + part;
        for (int32_t y = top; y <= bottom; ++y) column[static_cast<int64_t>(y) * w] = value;
      }
    }
    return;
  }
  for (int32_t c = 0; c < w; ++c) {
    int32_t m_lo = 0;
    int32_t m_hi = -1;
    kiln_ohlc_sub_column_span(c, sx, sub_columns, &m_lo, &m_hi);
    int32_t row_lo = h;
    int32_t row_hi = -1;
    for (int32_t m = m_lo; m <= m_hi; ++m) {
      const int32_t bar = m / parts;
      const int32_t part = m - bar * parts;
      if (part == 3) continue;
      const float f = kiln_ohlc_overlap(c, m, sx);
      if (!(f > 0.0f)) continue;
      const float delta = f * s.bar_delta[bar];
      int32_t top = 0;
      int32_t bottom = 0;
      kiln_bar_part_rows(part, candle, s.open_row[bar], s.high_row[bar], s.low_row[bar], s.close_row[bar], &top,
                         &bottom);
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

// Whether day i of a window is bullish, for the ink of its volume bar (kiln_day_bullish).
inline bool day_bullish(const float* window, int32_t channels, int32_t price_channels, int32_t i) {
  const float* day = window + static_cast<int64_t>(i) * channels;
  const int32_t close = price_channels - 1;
  const float prev_close = i > 0 ? day[close - channels] : day[close];
  return kiln_day_bullish(price_channels == 4 ? 1 : 0, i, day[0], day[close], prev_close) != 0;
}

// The volume bars and moving-average lines (render_px.h, "Layers") over the price layer, each in its ink
// (render_layer_inks: gray charts draw all in `ink`). Days sharing a column overwrite in day order.
template <typename Pixel>
void render_layers(const kiln::RenderParams& p, const float* window, int32_t channels, int32_t n, float vmin,
                   float vmax, Pixel* out) {
  const int32_t w = p.width;
  const kiln::RenderLayerInks inks = kiln::render_layer_inks(p);
  const int32_t bars = kiln::chart_style_draws_bars(p.style) ? 1 : 0;
  const int32_t parts = p.bar_gap ? 4 : 3;
  const float sx = static_cast<float>(w) / static_cast<float>(parts * n);
  const float x_step = kiln_line_x_step(w, n);
  const int32_t price_channels = channels - kiln::render_layer_channels(p);
  int32_t lane = price_channels;
  if (p.volume) {
    const Pixel up = level_to_pixel<Pixel>(static_cast<float>(inks.volume_up));
    const Pixel down = level_to_pixel<Pixel>(static_cast<float>(inks.volume_down));
    float largest = 0.0f;
    for (int32_t i = 0; i < n; ++i) largest = kiln_maxf(largest, window[static_cast<int64_t>(i) * channels + lane]);
    const int32_t rows = kiln::render_volume_rows(p);
    for (int32_t i = 0; i < n; ++i) {
      const int32_t c = kiln_day_column(i, bars, parts, sx, x_step, w);
      const int32_t filled = kiln_volume_rows(window[static_cast<int64_t>(i) * channels + lane], largest, rows);
      const Pixel ink = day_bullish(window, channels, price_channels, i) ? up : down;
      for (int32_t y = p.height - filled; y < p.height; ++y) out[static_cast<int64_t>(y) * w + c] = ink;
    }
    ++lane;
  }
  const int32_t h = kiln::render_price_rows(p);
  for (int32_t m = 0; m < p.moving_averages; ++m, ++lane) {
    const Pixel ink = level_to_pixel<Pixel>(static_cast<float>(inks.averages[static_cast<size_t>(m)]));
    int32_t x0 = kiln_day_column(0, bars, parts, sx, x_step, w);
    int32_t y0 = kiln_ohlc_row(window[lane], vmin, vmax, h);
    for (int32_t k = 1; k < n; ++k) {
      const int32_t x1 = kiln_day_column(k, bars, parts, sx, x_step, w);
      const int32_t y1 = kiln_ohlc_row(window[static_cast<int64_t>(k) * channels + lane], vmin, vmax, h);
      kiln::cpu::aliased_segment_draw(x0, y0, x1, y1, out, w, ink);  // the rows of kiln_aliased_rows per column
      x0 = x1;
      y0 = y1;
    }
  }
}

// Min and max of the drawn prices and the moving averages; false when any channel of the window is not finite.
inline bool chart_range(const kiln::RenderParams& p, const float* window, int32_t channels, int32_t n, float* vmin,
                        float* vmax) {
  const int32_t prices = channels - kiln::render_layer_channels(p);
  const bool bars = kiln::chart_style_draws_bars(p.style);
  const int32_t first = bars ? 0 : (prices == 4 ? 3 : 0);
  bool finite = window_range(window + first, n, channels, bars ? 4 : 1, vmin, vmax);
  int32_t lane = prices;
  if (p.volume) {
    float lo = 0.0f;
    float hi = 0.0f;
    finite = window_range(window + lane, n, channels, 1, &lo, &hi) && finite;
    ++lane;
  }
  for (int32_t m = 0; m < p.moving_averages; ++m, ++lane) {
    float lo = 0.0f;
    float hi = 0.0f;
    finite = window_range(window + lane, n, channels, 1, &lo, &hi) && finite;
    *vmin = kiln_minf(*vmin, lo);
    *vmax = kiln_maxf(*vmax, hi);
  }
  // Prices a line chart does not draw (Open, High, Low of OHLC windows) need not be finite.
  return finite;
}

// One gray image (the params' background and inks) of a window of `channels` values a day.
template <typename Pixel>
void render_gray_image(const kiln::RenderParams& p, const float* window, int32_t channels, int32_t n, Pixel* image,
                       LineScratch& line_scratch, OhlcScratch& ohlc_scratch, SpanScratch& span_scratch) {
  if constexpr (sizeof(Pixel) == 1 && kSpanPath) {
    if (span_path_applies(p, n)) return render_span_image(p, window, channels, n, image, span_scratch);
  }
  fill_image(image, static_cast<int64_t>(p.width) * p.height, static_cast<float>(p.background));
  float vmin = 0.0f;
  float vmax = 0.0f;
  // A window with NaN/inf has no defined shape: it stays blank (the planner never passes one).
  if (!chart_range(p, window, channels, n, &vmin, &vmax)) return;
  const int32_t price_rows = kiln::render_price_rows(p);
  if (kiln::chart_style_draws_bars(p.style)) {
    render_ohlc_image(p, window, channels, n, price_rows, vmin, vmax, image, ohlc_scratch);
  } else {
    const int32_t lane = channels - kiln::render_layer_channels(p) == 4 ? 3 : 0;
    render_line_image(p, window + lane, channels, n, price_rows, vmin, vmax, image, line_scratch);
  }
  if (kiln::render_layer_channels(p) > 0) render_layers(p, window, channels, n, vmin, vmax, image);
}

template <typename Pixel>
void render_range(const kiln::RenderParams& p, const kiln::VarShapeBatchView& windows,
                  const kiln::VarShapeBatchView& images, int64_t begin, int64_t end) {
  thread_local LineScratch line_scratch;
  thread_local OhlcScratch ohlc_scratch;
  // On the stack, not thread_local: GCC propagates a thread-local's address into the functions it clones for it and
  // then looks it up (__tls_get_addr in the Python module) at every use.
  SpanScratch span_scratch;
  thread_local std::vector<Pixel> plane;  // colour: the R, G and B planes of one window
  if (begin == end) return;
  if constexpr (sizeof(Pixel) == 1 && kSpanPath) {
    // The span path's loop, the check made once a batch (every window has the first's shape).
    if (!p.color && span_path_applies(p, windows[begin].width)) {
      for (int64_t i = begin; i < end; ++i) {
        const kiln::ImageView& w = windows[i];
        render_span_image(p, static_cast<const float*>(w.data), w.channels, w.width,
                          static_cast<uint8_t*>(images[i].data), span_scratch);
      }
      return;
    }
  }
  if (!p.color) {
    for (int64_t i = begin; i < end; ++i) {
      const kiln::ImageView& w = windows[i];
      render_gray_image(p, static_cast<const float*>(w.data), w.channels, w.width, static_cast<Pixel*>(images[i].data),
                        line_scratch, ohlc_scratch, span_scratch);
    }
    return;
  }
  // Colour: each channel is the gray image of its plane params (render_plane_params), interleaved.
  const kiln::RenderParams planes[3] = {kiln::render_plane_params(p, 0), kiln::render_plane_params(p, 1),
                                        kiln::render_plane_params(p, 2)};
  const int64_t pixels = static_cast<int64_t>(p.width) * p.height;
  plane.resize(static_cast<size_t>(3 * pixels));
  Pixel* const r = plane.data();
  Pixel* const g = r + pixels;
  Pixel* const b = g + pixels;
  for (int64_t i = begin; i < end; ++i) {
    const kiln::ImageView& w = windows[i];
    const auto* window = static_cast<const float*>(w.data);
    for (int32_t c = 0; c < 3; ++c) {
      render_gray_image(planes[c], window, w.channels, w.width, r + c * pixels, line_scratch, ohlc_scratch,
                        span_scratch);
    }
    auto* image = static_cast<Pixel*>(images[i].data);
    for (int64_t j = 0; j < pixels; ++j) {
      image[j * 3] = r[j];
      image[j * 3 + 1] = g[j];
      image[j * 3 + 2] = b[j];
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
