// Color and layout conversions: RGB<->BGR (RGBA<->BGRA), RGB/BGR -> gray with OpenCV's weights, gray -> RGB,
// HWC <-> CHW.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/image.h"
#include "kiln/ops.h"

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

}  // namespace kiln
