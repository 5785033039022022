// The color family: names, and validation of a call before any backend sees it.
#include "ops/color.h"

#include <string>

namespace kiln {

Status color_validate(const OpCall& call) {
  const auto& params = *static_cast<const ColorParams*>(call.params);
  if (std::string(color_conversion_name(params.conversion)) == "?") return invalid_argument("color: unknown conversion");
  if (call.out.count != call.in.count) return invalid_argument("color: input and output counts differ");
  const char* name = color_conversion_name(params.conversion);
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out = call.out[i];
    const std::string at = std::string("color ") + name + ": image " + std::to_string(i);
    if (in.width != out.width || in.height != out.height) return invalid_argument(at + ": input and output sizes differ");
    if (in.type != out.type) return invalid_argument(at + ": input and output types differ");
    if (in.type != PixelType::kU8 && in.type != PixelType::kF16 && in.type != PixelType::kF32) {
      return invalid_argument(at + ": unsupported pixel type");
    }
    if (in.row_stride > INT32_MAX || out.row_stride > INT32_MAX) return invalid_argument(at + ": row stride too large");
    int32_t want_in = in.channels;
    int32_t want_out = in.channels;
    switch (params.conversion) {
      case ColorConversion::kSwapRB:
        if (in.channels != 3 && in.channels != 4) return invalid_argument(at + ": needs 3 or 4 channels");
        break;
      case ColorConversion::kRgbToGray:
      case ColorConversion::kBgrToGray:
        if (in.channels != 3 && in.channels != 4) return invalid_argument(at + ": needs 3 or 4 input channels");
        want_out = 1;
        break;
      case ColorConversion::kGrayToRgb:
        want_in = 1;
        want_out = 3;
        break;
      case ColorConversion::kHwcToChw:
        if (in.layout != Layout::kHWC || out.layout != Layout::kCHW) {
          return invalid_argument(at + ": needs an HWC input and a CHW output");
        }
        break;
      case ColorConversion::kChwToHwc:
        if (in.layout != Layout::kCHW || out.layout != Layout::kHWC) {
          return invalid_argument(at + ": needs a CHW input and an HWC output");
        }
        break;
    }
    if (in.channels != want_in) return invalid_argument(at + ": needs " + std::to_string(want_in) + " input channels");
    if (out.channels != want_out) {
      return invalid_argument(at + ": needs " + std::to_string(want_out) + " output channels");
    }
  }
  return Status::ok();
}

}  // namespace kiln
