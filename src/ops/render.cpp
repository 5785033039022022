// Render op boundary: names and argument validation shared by every backend.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "kiln/ops.h"

namespace kiln {

namespace {
constexpr int32_t kMaxSide = 1 << 15;
constexpr float kMaxLineWidth = 256.0f;
}  // namespace

const char* chart_style_name(ChartStyle style) { return style == ChartStyle::kLine ? "line" : "ohlc"; }

Result<ChartStyle> chart_style_parse(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (n == "line") return ChartStyle::kLine;
  if (n == "ohlc" || n == "bars") return ChartStyle::kOhlc;
  return invalid_argument("unknown chart style '" + name + "' (expected line or ohlc)");
}

Status render_validate(const RenderParams& params, const WindowBatch& windows) {
  if (params.width < 1 || params.height < 1 || params.width > kMaxSide || params.height > kMaxSide) {
    return invalid_argument("image size " + std::to_string(params.width) + "x" + std::to_string(params.height) +
                            " is outside 1..32768");
  }
  if (params.style == ChartStyle::kLine &&
      !(std::isfinite(params.line_width) && params.line_width > 0.0f && params.line_width <= kMaxLineWidth)) {
    return invalid_argument("line width must be in (0, 256] pixels");
  }
  if (windows.seq_len < 2) return invalid_argument("seq_len must be at least 2");
  if (windows.count < 0) return invalid_argument("negative window count");
  if (windows.count > 0 && (windows.series == nullptr || windows.starts == nullptr)) {
    return invalid_argument("window batch has no data");
  }
  if (windows.channels != 1 && windows.channels != 4) {
    return invalid_argument("series must have 1 or 4 (OHLC) channels, not " + std::to_string(windows.channels));
  }
  if (params.style == ChartStyle::kOhlc && windows.channels != 4) {
    return invalid_argument("OHLC bars need Open/High/Low/Close data (use --ohlc input)");
  }
  return Status::ok();
}

Status render_validate_output(const RenderParams& params, const WindowBatch& windows, const BatchView& out) {
  KILN_TRY(render_validate(params, windows));
  if (out.count != windows.count || out.width != params.width || out.height != params.height ||
      out.channels != 1 || out.type != params.dtype) {
    return invalid_argument("output batch does not match the render parameters");
  }
  if (windows.count > 0 && out.data == nullptr) return invalid_argument("output batch has no storage");
  if (out.image_stride < static_cast<int64_t>(out.image_bytes())) return invalid_argument("output images overlap");
  return Status::ok();
}

}  // namespace kiln
