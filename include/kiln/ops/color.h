// Color and layout conversions: RGB<->BGR (RGBA<->BGRA), RGB/BGR -> gray with OpenCV's weights, gray -> RGB,
// HWC <-> CHW.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/enum_names.h"
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
inline constexpr EnumName<ColorConversion> kColorConversionNames[] = {
    {ColorConversion::kSwapRB, "swap_rb"},     {ColorConversion::kRgbToGray, "rgb_to_gray"},
    {ColorConversion::kBgrToGray, "bgr_to_gray"}, {ColorConversion::kGrayToRgb, "gray_to_rgb"},
    {ColorConversion::kHwcToChw, "hwc_to_chw"},  {ColorConversion::kChwToHwc, "chw_to_hwc"}};
inline const char* color_conversion_name(ColorConversion c) { return enum_name(kColorConversionNames, c); }
inline Result<ColorConversion> color_conversion_parse(const std::string& name) {
  return enum_parse(kColorConversionNames, name, "color conversion");
}

struct ColorParams {
  ColorConversion conversion = ColorConversion::kSwapRB;
};

}  // namespace kiln
