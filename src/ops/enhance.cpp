#include "ops/enhance.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace kiln {

namespace {

bool finite(float v) { return std::isfinite(v); }

}  // namespace

Status enhance_validate(const OpCall& call) {
  const auto& p = *static_cast<const EnhanceParams*>(call.params);
  if (!finite(p.brightness) || !finite(p.contrast)) return invalid_argument("enhance: brightness/contrast not finite");
  if (!finite(p.gamma) || p.gamma <= 0.0f) return invalid_argument("enhance: gamma must be finite and > 0");
  if (!finite(p.pil_contrast) || !finite(p.pil_sharpness)) {
    return invalid_argument("enhance: PIL contrast/sharpness factors must be finite");
  }
  if (!finite(p.unsharp_radius) || p.unsharp_radius < 0.0f || p.unsharp_radius > kEnhanceMaxRadius) {
    return invalid_argument("enhance: unsharp radius must be in [0, " + std::to_string(kEnhanceMaxRadius) + "]");
  }
  if (p.unsharp_percent < 0 || p.unsharp_percent > 10000) {
    return invalid_argument("enhance: unsharp percent must be in [0, 10000]");
  }
  if (p.unsharp_threshold < 0) return invalid_argument("enhance: unsharp threshold must be >= 0");
  if (call.in.count != call.out.count) {
    return invalid_argument("enhance: " + std::to_string(call.in.count) + " input images but " +
                            std::to_string(call.out.count) + " outputs");
  }
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& a = call.in[i];
    const ImageView& b = call.out[i];
    const std::string at = "enhance: image " + std::to_string(i);
    if (a.type != PixelType::kU8 || b.type != PixelType::kU8) return invalid_argument(at + ": only uint8 images");
    if (a.layout != Layout::kHWC || b.layout != Layout::kHWC) return invalid_argument(at + ": only HWC images");
    if (a.channels != 1 && a.channels != 3 && a.channels != 4) {
      return invalid_argument(at + ": 1, 3 or 4 channels, not " + std::to_string(a.channels));
    }
    if (a.width != b.width || a.height != b.height || a.channels != b.channels) {
      return invalid_argument(at + ": output shape differs from the input's");
    }
  }
  return Status::ok();
}

std::array<uint8_t, 256> enhance_linear_table(float contrast, float brightness) {
  std::array<uint8_t, 256> t{};
  for (int32_t x = 0; x < 256; ++x) {
    t[static_cast<size_t>(x)] = kiln_u8_round_even(std::fma(static_cast<float>(x), contrast, brightness));
  }
  return t;
}

std::array<uint8_t, 256> enhance_gamma_table(float gamma) {
  std::array<uint8_t, 256> t{};
  const double inv = 1.0 / static_cast<double>(gamma);
  for (int32_t x = 0; x < 256; ++x) {
    const double v = 255.0 * std::pow(static_cast<double>(x) / 255.0, inv);
    t[static_cast<size_t>(x)] = static_cast<uint8_t>(std::min(255.0, std::max(0.0, std::floor(v + 0.5))));
  }
  return t;
}

int32_t enhance_gaussian_ksize(float sigma) {
  // cvRound rounds half to even.
  return static_cast<int32_t>(std::nearbyint(static_cast<double>(sigma) * 3 * 2 + 1)) | 1;
}

std::vector<float> enhance_gaussian_weights(float sigma) {
  const int32_t n = enhance_gaussian_ksize(sigma);
  const double s = static_cast<double>(sigma);
  const double scale2 = -0.5 / (s * s);
  std::vector<double> w(static_cast<size_t>(n));
  double sum = 0;
  for (int32_t i = 0; i < n; ++i) {
    const double x = i - (n - 1) * 0.5;
    w[static_cast<size_t>(i)] = std::exp(scale2 * x * x);
    sum += w[static_cast<size_t>(i)];
  }
  std::vector<float> out(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = static_cast<float>(w[static_cast<size_t>(i)] / sum);
  return out;
}

EnhancePlan enhance_plan(const EnhanceParams& p) {
  EnhancePlan plan;
  KilnEnhanceArgs& a = plan.args;
  const bool linear = p.contrast != 1.0f || p.brightness != 0.0f;
  const bool gamma = p.gamma != 1.0f;
  for (int32_t x = 0; x < 256; ++x) plan.lut[static_cast<size_t>(x)] = static_cast<uint8_t>(x);
  if (linear) plan.lut = enhance_linear_table(p.contrast, p.brightness);
  if (gamma) {
    const auto g = enhance_gamma_table(p.gamma);
    for (auto& v : plan.lut) v = g[v];
  }
  if (linear || gamma) a.flags |= KILN_ENHANCE_LUT;
  if (p.pil_contrast != 1.0f) a.flags |= KILN_ENHANCE_CONTRAST;
  if (p.pil_sharpness != 1.0f) a.flags |= KILN_ENHANCE_SHARPNESS;
  if (p.unsharp_radius > 0.0f && p.unsharp_percent != 0) a.flags |= KILN_ENHANCE_UNSHARP;
  a.weight_0 = p.bgr ? 7471 : 19595;
  a.weight_1 = 38470;
  a.weight_2 = p.bgr ? 19595 : 7471;
  a.contrast_factor = p.pil_contrast;
  a.sharpness_factor = p.pil_sharpness;
  a.percent = p.unsharp_percent;
  a.threshold = p.unsharp_threshold;
  if ((a.flags & KILN_ENHANCE_UNSHARP) != 0) {
    plan.weights = enhance_gaussian_weights(p.unsharp_radius);
    a.ksize = static_cast<int32_t>(plan.weights.size());
  }
  return plan;
}

}  // namespace kiln
