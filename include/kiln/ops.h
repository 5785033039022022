// Operations: chart rendering (line and OHLC) of series windows, and the op call every image-op family
// (include/kiln/image_ops.h) goes through.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/image.h"
#include "kiln/status.h"

namespace kiln {

// Op families. Each image-op family has a public header include/kiln/ops/<family>.h, its validation in
// src/ops/<family>.cpp, per-pixel math in src/ops/<family>_px.h and one implementation per backend.
enum class OpKind : uint8_t {
  kRender = 0,
  kResize,      // resize (nearest/bilinear/area/bicubic), crop, letterbox
  kColor,       // channel swap, to gray, HWC <-> CHW
  kPreprocess,  // fused resize + swap + normalize + layout + dtype
  kNormalize,   // channel-wise normalization of f32 NCHW
  kQuality,     // blur / brightness / contrast / sharpness in one pass
  kEnhance,     // brightness/contrast/gamma, unsharp mask, PIL-style contrast and sharpness
  kWarp,        // affine warp, bilinear, with border modes
  kMask,        // logits -> u8 masks
};
inline constexpr int kOpKindCount = 9;

// One call of an image op: the family's parameters (the struct named by its header, by `op`), the input batch
// and either an output batch or a results array (quality: one QualityMetrics per input image).
struct OpCall {
  OpKind op = OpKind::kResize;
  const void* params = nullptr;
  VarShapeBatchView in;
  VarShapeBatchView out;
  void* results = nullptr;
};

// InvalidArgument when the call's shapes, types or parameters are wrong for its op; checked before any backend
// sees it.
Status op_validate(const OpCall& call);

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
