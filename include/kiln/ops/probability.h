// A segmentation model's person probability: a batch of model outputs (f32 or f16, C channels) -> f32 1-channel
// maps of the person's probability (sigmoid, softmax over the channels, or the values as they are), optionally
// smoothed in time into the output, which then holds the stream's previous smoothed map (MediaPipe's smoothing:
// kiln segment's temporal setting). The step between a model and the matte, on whichever device holds the output.
#pragma once

#include <cstdint>

#include "kiln/enum_names.h"
#include "kiln/image.h"
#include "kiln/ops.h"

namespace kiln {

// sigmoid: the channel holds logits. softmax: over every channel (C > 1). none: the channel holds probabilities.
enum class ProbabilityActivation : uint8_t { kSigmoid = 0, kSoftmax, kNone };
inline constexpr EnumName<ProbabilityActivation> kProbabilityActivationNames[] = {
    {ProbabilityActivation::kSigmoid, "sigmoid"},
    {ProbabilityActivation::kSoftmax, "softmax"},
    {ProbabilityActivation::kNone, "none"}};
inline const char* probability_activation_name(ProbabilityActivation a) {
  return enum_name(kProbabilityActivationNames, a);
}

// Input: f32 or f16 images, C channels, HWC or CHW. Output: f32, 1 channel, the same width and height, any layout.
// See docs/ops/probability.md.
struct ProbabilityParams {
  ProbabilityActivation activation = ProbabilityActivation::kSigmoid;
  int32_t channel = 0;   // the person's channel (0..C-1)
  // 0: the output is the probability. In (0, 1]: the output holds the previous smoothed map on entry and each pixel
  // moves from the new probability p towards it by temporal x H(p)^2 (H the binary entropy in bits, of p rounded
  // to 1/4096): pixels the model is sure of follow at once, unsure ones are held.
  float temporal = 0.0f;
};

}  // namespace kiln
