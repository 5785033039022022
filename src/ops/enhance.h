// The enhance op family, internal side: validation, the per-call tables every backend uses, and the per-backend
// entry points (params in include/kiln/ops/enhance.h, per-pixel math in enhance_px.h).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kiln/ops/enhance.h"
#include "ops/enhance_px.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for enhance.
Status enhance_validate(const OpCall& call);
// The CPU implementation (the reference every other backend is compared with).
Status enhance_cpu(const OpCall& call, ThreadPool* pool);

// The linear step as a table: saturate(round_half_even(fma(contrast, x, brightness))) for x = 0..255 (OpenCV's
// convertTo evaluates alpha * x + beta with one fused multiply-add and rounds half to even).
std::array<uint8_t, 256> enhance_linear_table(float contrast, float brightness);
// The gamma step as a table: round(255 * (x / 255)^(1 / gamma)) for x = 0..255, in double.
std::array<uint8_t, 256> enhance_gamma_table(float gamma);
// OpenCV's Gaussian kernel size for a u8 image and sigma: cvRound(sigma * 6 + 1) | 1.
int32_t enhance_gaussian_ksize(float sigma);
// The sampled Gaussian (computed in double like cv::getGaussianKernel, normalized, then rounded to float).
std::vector<float> enhance_gaussian_weights(float sigma);

// Everything a backend needs for one call: the kernel arguments, the combined linear+gamma table and the Gaussian
// weights (empty when the unsharp step is off).
struct EnhancePlan {
  KilnEnhanceArgs args{};
  std::array<uint8_t, 256> lut{};
  std::vector<float> weights;
};
EnhancePlan enhance_plan(const EnhanceParams& params);

// The unsharp step's Gaussian blur alone on the CPU (u8 HWC in -> u8 HWC out of the same shape, sigma > 0): the
// blurred image the unsharp rule compares with (exposed for the tests against cv::GaussianBlur).
Status enhance_gaussian_blur_cpu(const ImageView& in, const ImageView& out, float sigma);

}  // namespace kiln
