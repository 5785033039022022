// Enhancement: linear brightness/contrast, gamma, unsharp mask (radius, amount, threshold) and PIL-style
// ImageEnhance contrast and sharpness factors, applied in a fixed order (see docs/ops/enhance.md).
#pragma once

#include "kiln/image.h"
#include "kiln/op_exec.h"

namespace kiln {

struct EnhanceParams {
  float brightness = 0;      // added, in levels (0-255 scale)
  float contrast = 1;        // gain: out = contrast * in + brightness (OpenCV convertScaleAbs-style, saturated)
  float gamma = 1;           // out = 255 * (in / 255)^(1/gamma)... see docs for the exact convention
  float pil_contrast = 1;    // PIL ImageEnhance.Contrast factor (1 = unchanged)
  float pil_sharpness = 1;   // PIL ImageEnhance.Sharpness factor (1 = unchanged)
  float unsharp_radius = 0;  // PIL UnsharpMask radius (Gaussian sigma); 0 = off
  float unsharp_percent = 150;
  int32_t unsharp_threshold = 3;
};

// u8 HWC, 1/3/4 channels; out has the same shapes.
inline Status enhance(const EnhanceParams& params, const VarShapeBatchView& in, const VarShapeBatchView& out,
                      const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  return op_run(OpCall{OpKind::kEnhance, &params, in, out, nullptr}, exec, report);
}

}  // namespace kiln
