// Mask post-processing of segmentation logits: a batch of f32 CHW images with C channels (B, C, H, W), or one
// channel (B, 1, H, W) -> u8 masks (B, 1, H, W): activation (softmax / sigmoid), argmax or a threshold on the
// probability (never on the raw logit), smoothing, optional largest-component filter.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/enum_names.h"
#include "kiln/image.h"
#include "kiln/ops.h"

namespace kiln {

// auto: C == 1 sigmoid, else softmax. sigmoid with C > 1: each channel on its own (multi-label). none: the input
// already holds probabilities (thresholded as they are). softmax needs C > 1.
enum class MaskActivation : uint8_t { kAuto = 0, kSoftmax, kSigmoid, kNone };
// Smoothing of the u8 decision over a (2 radius + 1)^2 square window, border replicated: median (of the class
// ids or 0/foreground values), open (erode then dilate), close (dilate then erode).
enum class MaskSmoothing : uint8_t { kNone = 0, kMedian, kOpen, kClose };
inline constexpr EnumName<MaskActivation> kMaskActivationNames[] = {{MaskActivation::kAuto, "auto"},
                                                                    {MaskActivation::kSoftmax, "softmax"},
                                                                    {MaskActivation::kSigmoid, "sigmoid"},
                                                                    {MaskActivation::kNone, "none"}};
inline constexpr EnumName<MaskSmoothing> kMaskSmoothingNames[] = {{MaskSmoothing::kNone, "none"},
                                                                  {MaskSmoothing::kMedian, "median"},
                                                                  {MaskSmoothing::kOpen, "open"},
                                                                  {MaskSmoothing::kClose, "close"}};
inline const char* mask_activation_name(MaskActivation a) { return enum_name(kMaskActivationNames, a); }
inline Result<MaskActivation> mask_activation_parse(const std::string& name) {
  return enum_parse(kMaskActivationNames, name, "mask activation");
}
inline const char* mask_smoothing_name(MaskSmoothing s) { return enum_name(kMaskSmoothingNames, s); }
inline Result<MaskSmoothing> mask_smoothing_parse(const std::string& name) {
  return enum_parse(kMaskSmoothingNames, name, "mask smoothing");
}

// Input: f32 or f16 images, C channels (1..256, the same for every image), layout kCHW (kHWC accepted for C == 1).
// Output: u8 images, 1 channel, the same width and height, any layout. See docs/ops/mask.md.
struct MaskParams {
  MaskActivation activation = MaskActivation::kAuto;
  // -1: C > 1: class ids (argmax over C, ties -> lowest id); C == 1: the binary mask of channel 0.
  // >= 0: binary mask of that class: its probability >= threshold -> foreground, else 0.
  int32_t target_class = -1;
  float threshold = 0.5f;          // probability threshold, in (0, 1)
  MaskSmoothing smoothing = MaskSmoothing::kNone;
  int32_t radius = 1;              // smoothing window (2 radius + 1)^2; 0..kMaskMaxRadius (0: no smoothing)
  bool largest_component = false;  // keep only the largest 8-connected non-zero component (ties: first in raster order)
  uint8_t foreground = 255;        // value of binary-mask pixels (1..255)
};
inline constexpr int32_t kMaskMaxRadius = 16;
inline constexpr int32_t kMaskMaxChannels = 256;

}  // namespace kiln
