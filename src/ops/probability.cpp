// The probability family's host side shared by every backend: validation and the resolved kernel parameters.
#include "ops/probability.h"

#include <cmath>
#include <string>

namespace kiln {

namespace {

// The bytes from an image's first pixel to past its last.
int64_t extent_bytes(const ImageView& v) {
  const int64_t planes = v.layout == Layout::kCHW && v.channels > 1 ? (v.channels - 1) * v.plane_stride : 0;
  return planes + v.row_stride * v.height;
}

}  // namespace

Status probability_validate(const OpCall& call) {
  const auto* params = static_cast<const ProbabilityParams*>(call.params);
  if (params == nullptr) return invalid_argument("probability: no parameters");
  const ProbabilityParams& p = *params;
  if (static_cast<uint8_t>(p.activation) > static_cast<uint8_t>(ProbabilityActivation::kNone)) {
    return invalid_argument("probability: unknown activation");
  }
  if (!(p.temporal >= 0.0f && p.temporal <= 1.0f)) {
    return invalid_argument("probability: temporal " + std::to_string(p.temporal) + " outside [0, 1]");
  }
  if (p.channel < 0) return invalid_argument("probability: negative channel");
  if (call.results != nullptr) return invalid_argument("probability: takes an output batch, not results");
  if (call.out.count != call.in.count) {
    return invalid_argument("probability: " + std::to_string(call.in.count) + " inputs but " +
                            std::to_string(call.out.count) + " outputs");
  }
  if (call.in.space != call.out.space) {
    return invalid_argument("probability: input and output in different memory spaces");
  }
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out = call.out[i];
    const std::string at = "probability: image " + std::to_string(i) + ": ";
    if (in.type != PixelType::kF32 && in.type != PixelType::kF16) {
      return invalid_argument(at + "input must be float32 or float16, not " + pixel_type_name(in.type));
    }
    if (p.channel >= in.channels) {
      return invalid_argument(at + "channel " + std::to_string(p.channel) + " of an output with " +
                              std::to_string(in.channels) + " channels");
    }
    if (p.activation == ProbabilityActivation::kSoftmax && in.channels < 2) {
      return invalid_argument(at + "softmax needs 2 or more channels");
    }
    if (out.type != PixelType::kF32 || out.channels != 1) return invalid_argument(at + "output must be float32, 1 channel");
    if (out.width != in.width || out.height != in.height) {
      return invalid_argument(at + "output " + std::to_string(out.width) + "x" + std::to_string(out.height) +
                              " for an input of " + std::to_string(in.width) + "x" + std::to_string(in.height));
    }
    if (in.row_stride > INT32_MAX || out.row_stride > INT32_MAX) return invalid_argument(at + "row stride too large");
    const auto* in_begin = static_cast<const uint8_t*>(in.data);
    const auto* out_begin = static_cast<const uint8_t*>(out.data);
    if (in_begin < out_begin + extent_bytes(out) && out_begin < in_begin + extent_bytes(in)) {
      return invalid_argument(at + "the output overlaps the input");  // kernels read one while writing the other
    }
  }
  return Status::ok();
}

KilnProbabilityParams probability_params_resolve(const ProbabilityParams& params) {
  KilnProbabilityParams p{};
  p.activation = params.activation == ProbabilityActivation::kSoftmax ? KILN_PROB_ACT_SOFTMAX
                 : params.activation == ProbabilityActivation::kNone  ? KILN_PROB_ACT_NONE
                                                                      : KILN_PROB_ACT_SIGMOID;
  p.channel = params.channel;
  p.smooth = params.temporal > 0.0f ? 1 : 0;
  p.temporal = params.temporal;
  return p;
}

}  // namespace kiln
