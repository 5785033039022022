// Fused preprocessing for inference: u8 HWC images of any size -> resize (or letterbox) -> optional R/B swap ->
// (x * scale - mean) / std -> CHW or HWC, f32 or f16, in one pass with no intermediate images.
#pragma once

#include <cstdint>

#include "kiln/image.h"
#include "kiln/params.h"
#include "kiln/ops.h"
#include "kiln/ops/color.h"
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
  // NV12 inputs (video frames kept in device memory): each input is a u8 1-channel view of the picture's luma rows
  // followed by its (h + 1) / 2 chroma rows (U, V interleaved), so a view of H rows holds a picture of 2H / 3 rows
  // (rounded down) and an even width. Each pixel the sampling reads is converted to RGB exactly as
  // ColorConversion::kNv12ToRgb converts it, so the result is that conversion followed by this op, without the RGB
  // image; the outputs have 3 channels. Not in preprocess_params(): the video path sets it.
  bool nv12 = false;
  YuvMatrix yuv_matrix = YuvMatrix::kBt709;
  bool yuv_full_range = false;
};

// interp, letterbox, pad, bgr, scale, mean, std. The lists take one value per channel; a single value applies to
// every color channel.
const ParamTable<PreprocessParams>& preprocess_params();

}  // namespace kiln
