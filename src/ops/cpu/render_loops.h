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
  const int32_t candle = p.style == kiln::ChartStyle::kCandlestick ? 1 : 0;
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

template <typename Pixel>
void render_range(const kiln::RenderParams& p, const kiln::VarShapeBatchView& windows,
                  const kiln::VarShapeBatchView& images, int64_t begin, int64_t end) {
  thread_local LineScratch line_scratch;
  thread_local OhlcScratch ohlc_scratch;
  for (int64_t i = begin; i < end; ++i) {
    const kiln::ImageView& w = windows[i];
    const auto* window = static_cast<const float*>(w.data);
    auto* image = static_cast<Pixel*>(images[i].data);
    if (kiln::chart_style_draws_bars(p.style)) {
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
