// Mask post-processing of segmentation logits: a batch of f32 CHW images with C channels (B, C, H, W), or one
// channel (B, 1, H, W) -> u8 masks (B, 1, H, W): activation (softmax / sigmoid), argmax or a threshold on the
// probability (never on the raw logit), smoothing, optional largest-component filter.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/image.h"
#include "kiln/op_exec.h"

namespace kiln {

enum class MaskActivation : uint8_t { kAuto = 0, kSoftmax, kSigmoid, kNone };  // auto: C == 1 sigmoid, else softmax
enum class MaskSmoothing : uint8_t { kNone = 0, kMedian, kOpen, kClose };
const char* mask_smoothing_name(MaskSmoothing smoothing);
Result<MaskSmoothing> mask_smoothing_parse(const std::string& name);

struct MaskParams {
  MaskActivation activation = MaskActivation::kAuto;
  // -1: class ids (argmax over C; C == 1: probability >= threshold -> 1). >= 0: binary mask of that class
  // (its probability >= threshold).
  int32_t target_class = -1;
  float threshold = 0.5f;
  MaskSmoothing smoothing = MaskSmoothing::kNone;
  int32_t radius = 1;              // smoothing window (2 radius + 1)^2
  bool largest_component = false;  // keep only the largest 8-connected non-zero component
  uint8_t foreground = 255;        // value of binary-mask pixels
};

inline Status mask_postprocess(const MaskParams& params, const VarShapeBatchView& in, const VarShapeBatchView& out,
                               const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  return op_run(OpCall{OpKind::kMask, &params, in, out, nullptr}, exec, report);
}

}  // namespace kiln
