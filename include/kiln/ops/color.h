// Color and layout conversions: RGB<->BGR (RGBA<->BGRA), RGB/BGR -> gray with OpenCV's weights, gray -> RGB,
// HWC <-> CHW, NV12 (a video decoder's 4:2:0 frames: NVDEC's, on the device) -> RGB, and RGB -> NV12 (an
// encoder's: NVENC's, on the device).
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
  // u8 NV12 -> u8 RGB. The input is one 1-channel u8 view holding both planes at one row stride: rows
  // [0, out height) the luma, rows [ColorParams::nv12_chroma_row, + (out height + 1) / 2) the interleaved U, V
  // samples (one pair per 2x2 pixels). Width even, the same as the output's.
  kNv12ToRgb,
  // u8 RGB -> u8 NV12 (a video encoder's input: NVENC's device frames), the output one view of both planes as above
  // (rows [0, in height) the luma, from nv12_chroma_row the chroma, one U, V pair per 2x2 pixels from their sum).
  kRgbToNv12,
};
inline constexpr EnumName<ColorConversion> kColorConversionNames[] = {
    {ColorConversion::kSwapRB, "swap_rb"},     {ColorConversion::kRgbToGray, "rgb_to_gray"},
    {ColorConversion::kBgrToGray, "bgr_to_gray"}, {ColorConversion::kGrayToRgb, "gray_to_rgb"},
    {ColorConversion::kHwcToChw, "hwc_to_chw"},  {ColorConversion::kChwToHwc, "chw_to_hwc"},
    {ColorConversion::kNv12ToRgb, "nv12_to_rgb"}, {ColorConversion::kRgbToNv12, "rgb_to_nv12"}};
inline const char* color_conversion_name(ColorConversion c) { return enum_name(kColorConversionNames, c); }
inline Result<ColorConversion> color_conversion_parse(const std::string& name) {
  return enum_parse(kColorConversionNames, name, "color conversion");
}

// The YUV -> RGB matrix of a video (its colour space; FFmpeg's AVCOL_SPC_*: BT.470BG and SMPTE 170M are BT.601).
enum class YuvMatrix : uint8_t { kBt601 = 0, kBt709, kBt2020 };
inline constexpr EnumName<YuvMatrix> kYuvMatrixNames[] = {
    {YuvMatrix::kBt601, "bt601"}, {YuvMatrix::kBt709, "bt709"}, {YuvMatrix::kBt2020, "bt2020"}};

struct ColorParams {
  ColorConversion conversion = ColorConversion::kSwapRB;
  // kNv12ToRgb and kRgbToNv12 only:
  int32_t nv12_chroma_row = 0;  // the NV12 view's row where the chroma plane starts; 0: right after the luma
  YuvMatrix yuv_matrix = YuvMatrix::kBt709;
  bool yuv_full_range = false;  // full (JPEG) range instead of limited (16-235 luma, 16-240 chroma)
};

}  // namespace kiln
