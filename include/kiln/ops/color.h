// Color and layout conversions: RGB<->BGR (RGBA<->BGRA), RGB/BGR -> gray with OpenCV's weights, gray -> RGB,
// HWC <-> CHW.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/image.h"
#include "kiln/exec.h"

namespace kiln {

enum class ColorConversion : uint8_t {
  kSwapRB = 0,  // 3 or 4 channels; alpha kept
  kRgbToGray,   // 3/4 -> 1 channel: 0.299 R + 0.587 G + 0.114 B (OpenCV's COLOR_RGB2GRAY)
  kBgrToGray,
  kGrayToRgb,   // 1 -> 3 channels
  kHwcToChw,    // same pixels, planar output
  kChwToHwc,
};
const char* color_conversion_name(ColorConversion conversion);
Result<ColorConversion> color_conversion_parse(const std::string& name);

struct ColorParams {
  ColorConversion conversion = ColorConversion::kSwapRB;
};

// Same type (u8, f16 or f32) and size in and out, pairwise.
inline Status color_convert(const ColorParams& params, const VarShapeBatchView& in, const VarShapeBatchView& out,
                            const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  return op_run(OpCall{OpKind::kColor, &params, in, out, nullptr}, exec, report);
}

}  // namespace kiln
