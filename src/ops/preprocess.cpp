// Preprocess: validation and the constants shared by the backends.
#include "ops/preprocess.h"

#include <cmath>
#include <string>

namespace kiln {

KilnPreprocessConsts preprocess_consts(const PreprocessParams& params) {
  KilnPreprocessConsts k{};
  k.scale = params.scale;
  k.swap_rb = params.swap_rb ? 1 : 0;
  for (int c = 0; c < 4; ++c) {
    k.mean[c] = params.mean[c];
    k.std[c] = params.std[c];
    k.pad[c] = params.pad[c];
  }
  return k;
}

Status preprocess_validate(const OpCall& call) {
  if (call.params == nullptr) return invalid_argument("preprocess: no parameters");
  const auto& params = *static_cast<const PreprocessParams*>(call.params);
  if (static_cast<uint8_t>(params.interp) > static_cast<uint8_t>(Interp::kBicubic)) {
    return invalid_argument("preprocess: unknown interpolation");
  }
  if (params.fit != ResizeFit::kStretch && params.fit != ResizeFit::kLetterbox) {
    return invalid_argument("preprocess: unknown fit");
  }
  if (!std::isfinite(params.scale)) return invalid_argument("preprocess: scale is not finite");
  if (call.in.count != call.out.count) {
    return invalid_argument("preprocess: " + std::to_string(call.in.count) + " inputs but " +
                            std::to_string(call.out.count) + " outputs");
  }
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out = call.out[i];
    const std::string at = "preprocess: image " + std::to_string(i);
    if (in.type != PixelType::kU8 || in.layout != Layout::kHWC) return invalid_argument(at + ": input must be uint8 HWC");
    if (out.type != PixelType::kF32 && out.type != PixelType::kF16) {
      return invalid_argument(at + ": output must be float32 or float16");
    }
    if (in.channels != out.channels) return invalid_argument(at + ": input and output channels differ");
    if (in.channels != 1 && in.channels != 3 && in.channels != 4) {
      return invalid_argument(at + ": " + std::to_string(in.channels) + " channels (1, 3 or 4)");
    }
    if (params.swap_rb && in.channels < 3) return invalid_argument(at + ": swap_rb needs 3 or 4 channels");
    for (int32_t c = 0; c < in.channels; ++c) {
      if (!(params.std[c] != 0.0f) || !std::isfinite(params.std[c]) || !std::isfinite(params.mean[c])) {
        return invalid_argument(at + ": mean/std of channel " + std::to_string(c) + " not finite or std zero");
      }
    }
  }
  return Status::ok();
}

}  // namespace kiln
