#include "kiln/infer.h"

namespace kiln {

PreprocessParams model_preprocess_params(const ModelInput& input) {
  PreprocessParams params;
  params.swap_rb = input.bgr;
  params.scale = input.scale;
  for (size_t c = 0; c < 4; ++c) {
    params.mean[c] = input.mean.empty() ? 0.0f : input.mean[std::min(c, input.mean.size() - 1)];
    params.std[c] = input.std.empty() ? 1.0f : input.std[std::min(c, input.std.size() - 1)];
  }
  return params;
}

Layout model_input_layout(const ModelInput& input) { return input.layout == "nhwc" ? Layout::kHWC : Layout::kCHW; }

}  // namespace kiln
