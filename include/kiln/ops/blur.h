// Wide blurs of u8 HWC images (1, 3 or 4 channels, var-shape), cheap at any radius: each image is shrunk by an
// integer factor (the rounded mean of each factor x factor block), box-blurred `passes` times (a horizontal then a
// vertical box of `radius` pixels each time, edges clamped; two passes are close to a Gaussian), and enlarged
// bilinearly (half-pixel centres) back to its size. The blurred background of video calls (kiln segment --output
// blur). See docs/ops/blur.md.
#pragma once

#include <algorithm>
#include <cstdint>

namespace kiln {

inline constexpr int32_t kBlurMaxFactor = 16;
inline constexpr int32_t kBlurMaxRadius = 64;
inline constexpr int32_t kBlurMaxPasses = 4;

struct BlurParams {
  int32_t factor = 4;  // shrink factor, 1..kBlurMaxFactor
  int32_t radius = 3;  // box radius in shrunk pixels, 1..kBlurMaxRadius
  int32_t passes = 2;  // box passes, 1..kBlurMaxPasses
};

// The parameters of a blur about `radius` pixels wide at full size (kiln segment's --blur_radius): the frame shrunk
// by a quarter of the radius (1 to 8), then two boxes of half the remaining radius.
inline BlurParams blur_params_for_radius(int32_t radius) {
  BlurParams p;
  p.factor = std::clamp(radius / 4, 1, 8);
  p.radius = std::clamp(radius / p.factor / 2, 1, kBlurMaxRadius);
  p.passes = 2;
  return p;
}

}  // namespace kiln
