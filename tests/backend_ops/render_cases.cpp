#include "backend_ops/render_cases.h"

#include <cmath>
#include <random>

namespace kiln::test {

namespace {

RenderCase line(std::string name, int32_t w, int32_t h, float lw, int32_t seq_len, int32_t windows) {
  RenderCase c;
  c.name = std::move(name);
  c.params.width = w;
  c.params.height = h;
  c.params.line_width = lw;
  c.seq_len = seq_len;
  c.windows = windows;
  return c;
}

RenderCase ohlc(std::string name, int32_t w, int32_t h, int32_t seq_len, int32_t windows) {
  RenderCase c = line(std::move(name), w, h, 3.0f, seq_len, windows);
  c.params.style = ChartStyle::kOhlc;
  return c;
}

RenderCase candlestick(std::string name, int32_t w, int32_t h, int32_t seq_len, int32_t windows) {
  RenderCase c = ohlc(std::move(name), w, h, seq_len, windows);
  c.params.style = ChartStyle::kCandlestick;
  return c;
}

RenderCase with_shape(RenderCase c, SeriesShape shape) {
  c.shape = shape;
  return c;
}

RenderCase float32(RenderCase c) {
  c.params.dtype = PixelType::kF32;
  return c;
}

RenderCase with_layers(RenderCase c, bool volume, std::vector<int32_t> averages) {
  c.params.volume = volume;
  c.averages = std::move(averages);
  c.params.moving_averages = static_cast<int32_t>(c.averages.size());
  return c;
}

// Jiang-Kelly-Xiu's geometry: 3 px a day, white on black, volume in the bottom fifth, the window's moving average.
RenderCase jkx(std::string name, int32_t days, int32_t height, int32_t windows) {
  RenderCase c = with_layers(ohlc(std::move(name), 3 * days, height, days, windows), true, {days});
  c.params.bar_gap = false;
  c.params.background = 0;
  c.params.ink = c.params.ink_bullish = c.params.ink_bearish = 255;
  return c;
}

// RGB in the default colours (mplfinance's "charles"); volume bars by each day's direction, averages each its colour.
RenderCase color(RenderCase c) {
  c.name += "_color";
  c.params.color = true;
  return c;
}

}  // namespace

std::vector<RenderCase> render_cases() {
  std::vector<RenderCase> cases;
  cases.push_back(line("line_800x500_lw3", 800, 500, 3.0f, 100, 6));
  cases.push_back(line("line_224x224_lw2", 224, 224, 2.0f, 100, 12));
  cases.push_back(line("one_window", 128, 64, 3.0f, 50, 1));
  cases.push_back(line("seq_len_2", 64, 32, 2.0f, 2, 9));
  for (float lw : {0.5f, 1.0f, 1.5f, 4.0f, 10.0f}) {
    cases.push_back(line("width_" + std::to_string(static_cast<int>(lw * 10)), 160, 90, lw, 40, 5));
  }
  cases.push_back(line("size_1x1", 1, 1, 3.0f, 10, 3));
  cases.push_back(line("size_1x64", 1, 64, 3.0f, 10, 3));
  cases.push_back(line("size_64x1", 64, 1, 3.0f, 10, 3));
  cases.push_back(line("size_4096x64", 4096, 64, 3.0f, 200, 2));
  cases.push_back(line("narrower_than_series", 37, 50, 1.5f, 300, 3));
  cases.push_back(with_shape(line("flat", 100, 41, 3.0f, 30, 4), SeriesShape::kFlat));
  cases.push_back(with_shape(line("extreme_slopes", 300, 400, 2.0f, 60, 4), SeriesShape::kSpikes));
  cases.push_back(with_shape(line("steps", 256, 128, 3.0f, 64, 4), SeriesShape::kSteps));
  cases.push_back(with_shape(line("nan_window_blank", 64, 32, 3.0f, 20, 6), SeriesShape::kWithNaN));
  cases.push_back(float32(line("float32_output", 200, 100, 3.0f, 50, 4)));
  RenderCase levels = line("custom_levels", 120, 60, 2.5f, 30, 3);
  levels.params.background = 230;
  levels.params.ink = 20;
  cases.push_back(levels);
  RenderCase stride = line("stride_7", 96, 48, 2.0f, 30, 10);
  stride.stride = 7;
  cases.push_back(stride);
  cases.push_back(ohlc("ohlc_native", 400, 200, 100, 5));
  cases.push_back(ohlc("ohlc_scaled_down", 150, 80, 100, 5));
  cases.push_back(ohlc("ohlc_scaled_up", 1000, 120, 50, 3));
  cases.push_back(float32(ohlc("ohlc_float32", 120, 60, 30, 3)));
  cases.push_back(with_shape(ohlc("ohlc_flat", 40, 21, 10, 2), SeriesShape::kFlat));
  cases.push_back(candlestick("candlestick_native", 400, 200, 100, 5));
  cases.push_back(candlestick("candlestick_scaled_down", 150, 80, 100, 5));
  cases.push_back(candlestick("candlestick_scaled_up", 1000, 120, 50, 3));
  cases.push_back(float32(candlestick("candlestick_float32", 120, 60, 30, 3)));
  cases.push_back(with_shape(candlestick("candlestick_nan_window_blank", 64, 32, 20, 6), SeriesShape::kWithNaN));
  // Volume panels and moving averages.
  cases.push_back(jkx("jkx5", 5, 32, 9));
  cases.push_back(jkx("jkx20", 20, 64, 7));
  cases.push_back(jkx("jkx60", 60, 96, 4));
  cases.push_back(with_layers(ohlc("ohlc_volume_ma", 400, 200, 100, 4), true, {5, 20}));
  cases.push_back(with_layers(ohlc("ohlc_volume_scaled_down", 150, 80, 100, 4), true, {}));
  cases.push_back(with_layers(candlestick("candlestick_ma_scaled_up", 1000, 120, 50, 3), false, {10}));
  cases.push_back(with_layers(line("line_volume_ma", 800, 500, 3.0f, 100, 4), true, {5, 20, 50}));
  cases.push_back(with_layers(line("line_volume_narrower", 37, 50, 1.5f, 300, 3), true, {30}));
  cases.push_back(with_layers(with_shape(line("line_ma_steep", 120, 300, 2.0f, 30, 3), SeriesShape::kSpikes), false,
                              {1, 2}));
  cases.push_back(float32(with_layers(ohlc("ohlc_layers_float32", 120, 60, 30, 3), true, {3})));
  RenderCase panel = with_layers(ohlc("ohlc_volume_panel_40_gap_5", 200, 160, 50, 3), true, {7});
  panel.params.volume_height = 40;
  panel.params.volume_gap = 5;
  cases.push_back(panel);
  RenderCase nan_volume = with_layers(ohlc("ohlc_nan_volume_blank", 64, 48, 20, 6), true, {4});
  nan_volume.nan_volume = true;
  cases.push_back(nan_volume);
  // Colour: three gray planes of the colours' components, so the same tolerance as gray (anti-aliased lines too).
  cases.push_back(color(with_layers(candlestick("candlestick_volume_ma", 400, 200, 100, 4), true, {5, 20, 50})));
  cases.push_back(color(with_layers(ohlc("ohlc_volume_scaled_down", 150, 80, 100, 3), true, {10})));
  cases.push_back(color(with_layers(line("line_volume_ma", 300, 160, 2.0f, 60, 3), true, {5, 20})));
  cases.push_back(color(float32(with_layers(candlestick("candlestick_layers_float32", 120, 60, 30, 3), true, {3}))));
  RenderCase jkx_color = color(jkx("jkx20", 20, 64, 5));
  jkx_color.params.colors.averages = {ChartRgb{255, 255, 0}};
  cases.push_back(jkx_color);
  return cases;
}

std::vector<float> render_case_series(const RenderCase& c) {
  const int64_t rows = static_cast<int64_t>(c.windows - 1) * c.stride + c.seq_len;
  std::mt19937_64 rng(c.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> close(static_cast<size_t>(rows));
  float v = 100.0f;
  for (int64_t i = 0; i < rows; ++i) {
    switch (c.shape) {
      case SeriesShape::kRandomWalk:
      case SeriesShape::kWithNaN: v += normal(rng); break;
      case SeriesShape::kFlat: v = 42.0f; break;
      case SeriesShape::kSpikes: v = (i % 2 == 0) ? 0.0f : 1000.0f * (1.0f + 0.1f * normal(rng)); break;
      case SeriesShape::kSteps: v = static_cast<float>((i / 8) % 3); break;
    }
    close[static_cast<size_t>(i)] = v;
  }
  if (c.shape == SeriesShape::kWithNaN) close[static_cast<size_t>(rows / 2)] = std::nanf("");
  std::vector<float> out;
  for (int64_t i = 0; i < rows; ++i) {
    const float cl = close[static_cast<size_t>(i)];
    if (c.params.style == ChartStyle::kLine) {
      out.push_back(cl);
    } else {
      const float op = i > 0 ? close[static_cast<size_t>(i - 1)] : cl;
      const float wick = c.shape == SeriesShape::kFlat ? 0.0f : std::abs(normal(rng)) * 0.5f;
      out.insert(out.end(), {op, std::max(op, cl) + wick, std::min(op, cl) - wick, cl});
    }
    if (c.params.volume) {
      // Whole and fractional volumes, some days without trades.
      const float volume = i % 11 == 3 ? 0.0f : std::round(1000.0f * std::exp(normal(rng))) + 0.25f * (i % 4);
      out.push_back(c.nan_volume && i == rows / 2 ? std::nanf("") : volume);
    }
    for (const int32_t n : c.averages) {  // a trailing mean (over fewer rows at the start of the series)
      double sum = 0.0;
      const int64_t first = std::max<int64_t>(0, i + 1 - n);
      for (int64_t u = first; u <= i; ++u) sum += close[static_cast<size_t>(u)];
      out.push_back(static_cast<float>(sum / static_cast<double>(i + 1 - first)));
    }
  }
  return out;
}

}  // namespace kiln::test
