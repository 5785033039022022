// Enhancement of u8 HWC images (1/3/4 channels, var-shape): linear brightness/contrast, gamma, PIL-style
// ImageEnhance contrast and sharpness, and PIL's UnsharpMask, applied in a fixed order (docs/ops/enhance.md):
//   linear (contrast * x + brightness) -> gamma -> PIL contrast -> PIL sharpness -> unsharp mask,
// each step skipped when its parameters are at their identity value.
#pragma once

#include <cstdint>

#include "kiln/image.h"
#include "kiln/ops.h"

namespace kiln {

// The largest unsharp radius (Gaussian sigma); the kernel then has 301 taps.
inline constexpr float kEnhanceMaxRadius = 50.0f;

struct EnhanceParams {
  // Linear step: out = saturate(round_half_even(contrast * x + brightness)), like cv::Mat::convertTo(u8, contrast,
  // brightness). Identity: contrast 1, brightness 0.
  float brightness = 0;  // added, in levels (0-255 scale)
  float contrast = 1;    // gain
  // Gamma step: out = round(255 * (x / 255)^(1 / gamma)) (the usual "adjust_gamma": gamma > 1 brightens), through a
  // 256-entry table computed once per call. Identity: 1. Must be > 0.
  float gamma = 1;
  // PIL ImageEnhance.Contrast factor: blend of the image with its mean gray level. Identity: 1.
  float pil_contrast = 1;
  // PIL ImageEnhance.Sharpness factor: blend of the image with its SMOOTH-filtered version. Identity: 1.
  float pil_sharpness = 1;
  // PIL ImageFilter.UnsharpMask(radius, percent, threshold): Gaussian sigma (0 = off, at most kEnhanceMaxRadius),
  // amount in percent (0..10000), threshold in levels (>= 0; values with |x - blurred| <= threshold are kept).
  float unsharp_radius = 0;
  int32_t unsharp_percent = 150;
  int32_t unsharp_threshold = 3;
  // Channel order of 3/4-channel images for the gray level of PIL contrast: false = R,G,B(,A), true = B,G,R(,A).
  bool bgr = false;
};

// The predecessor's enhancement of small images: PIL contrast x1.15, PIL sharpness x1.1, UnsharpMask(1, 120, 3).
inline EnhanceParams enhance_params_predecessor() {
  EnhanceParams p;
  p.pil_contrast = 1.15f;
  p.pil_sharpness = 1.1f;
  p.unsharp_radius = 1.0f;
  p.unsharp_percent = 120;
  p.unsharp_threshold = 3;
  return p;
}

}  // namespace kiln
