// The blur family's host side shared by every backend: validation and the resolved kernel parameters.
#include "ops/blur.h"

#include <string>

namespace kiln {

Status blur_validate(const OpCall& call) {
  const auto& p = *static_cast<const BlurParams*>(call.params);
  const auto in_range = [](int32_t value, int32_t most, const char* name) {
    if (value >= 1 && value <= most) return Status::ok();
    return invalid_argument("blur: " + std::string(name) + " " + std::to_string(value) + " outside 1.." +
                            std::to_string(most));
  };
  KILN_TRY(in_range(p.factor, kBlurMaxFactor, "factor"));
  KILN_TRY(in_range(p.radius, kBlurMaxRadius, "radius"));
  KILN_TRY(in_range(p.passes, kBlurMaxPasses, "passes"));
  if (call.out.count != call.in.count) {
    return invalid_argument("blur: " + std::to_string(call.in.count) + " inputs but " +
                            std::to_string(call.out.count) + " outputs");
  }
  if (call.in.space != call.out.space) return invalid_argument("blur: input and output in different memory spaces");
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out = call.out[i];
    const std::string at = "blur: image " + std::to_string(i) + ": ";
    if (in.type != PixelType::kU8 || out.type != PixelType::kU8) return invalid_argument(at + "images must be uint8");
    if (in.layout != Layout::kHWC || out.layout != Layout::kHWC) return invalid_argument(at + "images must be HWC");
    if (in.channels != 1 && in.channels != 3 && in.channels != 4) {
      return invalid_argument(at + "1, 3 or 4 channels, not " + std::to_string(in.channels));
    }
    if (out.channels != in.channels || out.width != in.width || out.height != in.height) {
      return invalid_argument(at + "the output must have the input's size and channels");
    }
    if (in.row_stride > INT32_MAX || out.row_stride > INT32_MAX) return invalid_argument(at + "row stride too large");
  }
  return Status::ok();
}

KilnBlurArgs blur_args_resolve(const BlurParams& params) {
  KilnBlurArgs a{};
  a.factor = params.factor;
  a.radius = params.radius;
  a.norm = 1.0f / static_cast<float>(2 * params.radius + 1);
  return a;
}

std::vector<ImageView> blur_small_shapes(const VarShapeBatchView& in, int32_t factor) {
  std::vector<ImageView> views;
  views.reserve(static_cast<size_t>(in.count));
  for (int64_t i = 0; i < in.count; ++i) {
    const ImageView& v = in[i];
    views.push_back(image_view_packed(v.data, kiln_blur_small_size(v.width, factor),
                                      kiln_blur_small_size(v.height, factor), v.channels, PixelType::kU8));
  }
  return views;
}

}  // namespace kiln
