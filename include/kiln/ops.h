// Image operations. Today: chart rendering (line and OHLC) of series windows.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/image.h"
#include "kiln/status.h"

namespace kiln {

enum class ChartStyle : uint8_t { kLine = 0, kOhlc };

const char* chart_style_name(ChartStyle style);
Result<ChartStyle> chart_style_parse(const std::string& name);  // line|ohlc

struct RenderParams {
  ChartStyle style = ChartStyle::kLine;
  int32_t width = 800;
  int32_t height = 500;
  float line_width = 3.0f;       // stroke width in pixels (line charts)
  uint8_t background = 255;
  uint8_t ink = 0;               // line colour
  uint8_t ink_bullish = 51;      // OHLC bars with close >= open (predecessor's colors.bullish 0.2)
  uint8_t ink_bearish = 0;       // OHLC bars with close < open (colors.bearish 0.0)
  PixelType dtype = PixelType::kU8;  // kF32: level / 255 (white 1.0, ink 0.0 by default)
};

// Windows of a series, as views: window i is rows [starts[i], starts[i] + seq_len) of `series`,
// `channels` interleaved values per row (1, or 4 = Open, High, Low, Close).
struct WindowBatch {
  const float* series = nullptr;
  int32_t channels = 1;
  const int64_t* starts = nullptr;
  int64_t count = 0;
  int32_t seq_len = 0;
};

// InvalidArgument on bad sizes, widths, styles (OHLC needs 4 channels), seq_len < 2.
Status render_validate(const RenderParams& params, const WindowBatch& windows);
// Checks that `out` matches the params (count, width, height, 1 channel, dtype).
Status render_validate_output(const RenderParams& params, const WindowBatch& windows, const BatchView& out);

}  // namespace kiln
