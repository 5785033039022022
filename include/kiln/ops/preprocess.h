// Fused preprocessing for inference: u8 HWC images of any size -> resize (or letterbox) -> optional R/B swap ->
// (x * scale - mean) / std -> CHW or HWC, f32 or f16, in one pass with no intermediate images.
#pragma once

#include <cstdint>

#include "kiln/image.h"
#include "kiln/params.h"
#include "kiln/ops.h"
#include "kiln/ops/resize.h"

namespace kiln {

struct PreprocessParams {
  Interp interp = Interp::kBilinear;
  ResizeFit fit = ResizeFit::kStretch;
  float pad[4] = {0, 0, 0, 0};  // letterbox border value per channel, in input levels (0-255)
  bool swap_rb = false;         // BGR input -> RGB output (or the reverse); declared as "bgr"
  float scale = 1.0f / 255.0f;
  float mean[4] = {0.485f, 0.456f, 0.406f, 0.0f};  // ImageNet, applied after scale, per output channel
  float std[4] = {0.229f, 0.224f, 0.225f, 1.0f};
};

// interp, letterbox, pad, bgr, scale, mean, std. The lists take one value per channel; a single value applies to
// every color channel.
const ParamTable<PreprocessParams>& preprocess_params();

}  // namespace kiln
