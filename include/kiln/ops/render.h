// Chart rendering: windows of a price series -> anti-aliased line charts or OHLC bars, one gray (or, with `color`,
// RGB) image per window, optionally with a volume panel and moving-average lines.
// As an op call (kiln/ops.h), each window is an input view of the series (1 row of seq_len float32 pixels with the
// series' channels, pointing into the series: no copy) and each image an output view (width x height, 1 channel,
// uint8 or float32, packed rows; 3 interleaved channels R, G, B with `color`). A window's channels are the prices
// (1, or 4 = Open, High, Low, Close), then the volume when `volume`, then `moving_averages` moving-average values
// (computed by the caller).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/enum_names.h"
#include "kiln/image.h"
#include "kiln/ops.h"
#include "kiln/params.h"
#include "kiln/status.h"

namespace kiln {

// OHLC bars: a high-low bar with the open tick left and the close tick right; candlesticks: a body from open to close
// with a wick from high to low through its middle. Both are drawn in ink_bullish (close >= open) or ink_bearish.
// The encodings turn a window's n closes into an n x n field (ops/series_encoding.h): Gramian angular summation and
// difference fields, the Markov transition field and the recurrence plot.
enum class ChartStyle : uint8_t { kLine = 0, kOhlc, kCandlestick, kGasf, kGadf, kMtf, kRp };

inline constexpr EnumName<ChartStyle> kChartStyleNames[] = {{ChartStyle::kLine, "line"},
                                                            {ChartStyle::kOhlc, "ohlc"},
                                                            {ChartStyle::kCandlestick, "candlestick"},
                                                            {ChartStyle::kGasf, "gasf"},
                                                            {ChartStyle::kGadf, "gadf"},
                                                            {ChartStyle::kMtf, "mtf"},
                                                            {ChartStyle::kRp, "rp"},
                                                            {ChartStyle::kOhlc, "bars"},
                                                            {ChartStyle::kCandlestick, "candles"}};
inline const char* chart_style_name(ChartStyle style) { return enum_name(kChartStyleNames, style); }
inline Result<ChartStyle> chart_style_parse(const std::string& name) {
  return enum_parse(kChartStyleNames, name, "chart style");
}
// The style draws a window's Open/High/Low/Close rows (4 channels): OHLC bars and candlesticks.
inline bool chart_style_draws_bars(ChartStyle style) {
  return style == ChartStyle::kOhlc || style == ChartStyle::kCandlestick;
}
// The style is a series encoding (an n x n field of the window's closes), not a chart.
inline bool chart_style_is_encoding(ChartStyle style) { return style >= ChartStyle::kGasf; }

inline constexpr int32_t kMaxMovingAverageLines = 16;

struct ChartRgb {
  uint8_t r = 0, g = 0, b = 0;
  uint8_t channel(int32_t c) const { return c == 0 ? r : c == 1 ? g : b; }
};
// "#rrggbb" (or "rrggbb"), case-insensitive; rgb_text gives "#rrggbb".
Result<ChartRgb> rgb_parse(const std::string& text);
std::string rgb_text(ChartRgb color);

// The colours of `color` charts. Defaults: mplfinance's "charles" style (its candle, OHLC and volume colours, white
// background) with the default style's moving-average colours (charles repeats its own), and matplotlib's first
// colour for the line. A bar, candle or volume bar is bullish when close >= open (mplfinance: close > open); on a
// close-only series a volume bar is bullish when the close is >= the day before's (the window's first day: bullish).
struct RenderColors {
  ChartRgb background{255, 255, 255};
  ChartRgb line{0x1f, 0x77, 0xb4};
  ChartRgb up{0x00, 0x63, 0x40};
  ChartRgb down{0xa0, 0x21, 0x28};
  ChartRgb volume_up{0x00, 0x7a, 0x00};
  ChartRgb volume_down{0xd5, 0x0d, 0x18};
  // Moving average m is drawn in averages[m % count].
  std::vector<ChartRgb> averages{{0x40, 0xe0, 0xd0}, {0xff, 0x00, 0xff}, {0xff, 0xd7, 0x00}, {0x1f, 0x77, 0xb4},
                                 {0xff, 0x7f, 0x0e}, {0x2c, 0xa0, 0x2c}, {0xe3, 0x77, 0xc2}};
};

// Gray levels of the layers of one plane. Gray charts leave `set` false and draw every layer in `ink`; a colour chart
// renders each channel as a gray plane with these set to that channel of its colours (render_plane_params).
struct RenderLayerInks {
  bool set = false;
  uint8_t volume_up = 0;
  uint8_t volume_down = 0;
  std::array<uint8_t, kMaxMovingAverageLines> averages{};
};

struct RenderParams {
  ChartStyle style = ChartStyle::kLine;
  int32_t width = 800;
  int32_t height = 500;
  float line_width = 3.0f;       // stroke width in pixels (line charts)
  uint8_t background = 255;
  uint8_t ink = 0;               // line colour
  uint8_t ink_bullish = 51;      // bars and candles with close >= open (predecessor's colors.bullish 0.2)
  uint8_t ink_bearish = 0;       // bars and candles with close < open (colors.bearish 0.0)
  PixelType dtype = PixelType::kU8;  // kF32: level / 255 (white 1.0, ink 0.0 by default)
  bool volume = false;           // a volume channel after the prices: bars in a panel at the bottom, in `ink`
  int32_t volume_height = 0;     // rows of the volume panel (0: height / 5)
  int32_t volume_gap = 2;        // background rows between the price area and the volume panel
  int32_t moving_averages = 0;   // channels after the volume: 1-px aliased lines in `ink` through the days' columns
  bool bar_gap = true;           // OHLC bars: a gap after each bar (4 sub-columns a day); false: 3 (open, bar, close)
  int32_t mtf_bins = 8;          // Markov transition field: quantile bins of the window
  float rp_threshold = -1.0f;    // recurrence plot: >= 0: 255 where |x_i - x_j| <= it, else 0; < 0: the distance
  bool color = false;            // RGB images in `colors` (the gray levels above are not used); charts only
  RenderColors colors{};
  RenderLayerInks layer_inks{};  // internal: set by render_plane_params
};

// Channels of an image: 3 with `color`, else 1.
inline int32_t render_image_channels(const RenderParams& p) { return p.color ? 3 : 1; }
// The gray params that render channel c (0 R, 1 G, 2 B) of a colour chart: its colours' component c as background,
// line ink, bar inks and layer inks. Every backend renders colour as these three gray planes, interleaved.
RenderParams render_plane_params(const RenderParams& p, int32_t c);
// The volume and moving-average inks of a gray plane: layer_inks when set, else `ink` for all.
inline RenderLayerInks render_layer_inks(const RenderParams& p) {
  if (p.layer_inks.set) return p.layer_inks;
  RenderLayerInks inks;
  inks.volume_up = inks.volume_down = p.ink;
  inks.averages.fill(p.ink);
  return inks;
}

// Rows of the volume panel (0 without volume) and of the price area above it (height - panel - gap).
inline int32_t render_volume_rows(const RenderParams& p) {
  return p.volume ? (p.volume_height > 0 ? p.volume_height : p.height / 5) : 0;
}
inline int32_t render_price_rows(const RenderParams& p) {
  return p.volume ? p.height - render_volume_rows(p) - p.volume_gap : p.height;
}
// Channels after the prices in every window.
inline int32_t render_layer_channels(const RenderParams& p) { return (p.volume ? 1 : 0) + p.moving_averages; }

// Windows of a series: window i is rows [starts[i], starts[i] + seq_len) of `series`, `channels` interleaved values
// per row (1, or 4 = Open, High, Low, Close, then the params' volume and moving-average channels).
struct WindowBatch {
  const float* series = nullptr;
  int32_t channels = 1;
  const int64_t* starts = nullptr;
  int64_t count = 0;
  int32_t seq_len = 0;
};

// width, height, line_width, style, background, ink (sets the bar inks too), ink_bullish, ink_bearish, dtype, volume,
// volume_height, volume_gap, moving_averages, bar_gap, mtf_bins, rp_threshold, color, color_background, color_line,
// color_up, color_down, color_volume_up, color_volume_down, color_averages.
const ParamTable<RenderParams>& render_params();

// InvalidArgument on bad sizes, widths, styles (OHLC needs 4 price channels), seq_len < 2, a volume panel that leaves
// fewer than 2 price rows, channels that do not match the volume and moving averages, color with an encoding.
Status render_validate(const RenderParams& params, const WindowBatch& windows);

// Window `start` of a series as a render input view.
ImageView render_window_view(const float* series, int32_t channels, int64_t start, int32_t seq_len);

// A render call with the views it points at: windows -> images of `out` (count, width, height,
// render_image_channels() channels, the params' dtype). `params`, the series and `out` must outlive it. Movable (the
// views stay where they are).
class RenderCall {
 public:
  RenderCall(const RenderParams& params, const WindowBatch& windows, const BatchView& out);
  RenderCall(RenderCall&&) noexcept = default;
  RenderCall& operator=(RenderCall&&) noexcept = default;
  RenderCall(const RenderCall&) = delete;
  RenderCall& operator=(const RenderCall&) = delete;

  const OpCall& call() const { return m_call; }

 private:
  std::vector<ImageView> m_windows;
  std::vector<ImageView> m_images;
  OpCall m_call;
};

}  // namespace kiln
