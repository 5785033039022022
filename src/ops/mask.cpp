// The mask family's host side shared by every backend: names, validation, resolved kernel parameters and the
// largest-component filter.
#include "ops/mask.h"

#include <cmath>
#include <string>
#include <vector>

namespace kiln {

Status mask_validate(const OpCall& call) {
  const auto* params = static_cast<const MaskParams*>(call.params);
  if (params == nullptr) return invalid_argument("mask: no parameters");
  const MaskParams& p = *params;
  if (static_cast<uint8_t>(p.activation) > static_cast<uint8_t>(MaskActivation::kNone)) {
    return invalid_argument("mask: unknown activation");
  }
  if (static_cast<uint8_t>(p.smoothing) > static_cast<uint8_t>(MaskSmoothing::kClose)) {
    return invalid_argument("mask: unknown smoothing");
  }
  if (!(p.threshold > 0.0f && p.threshold < 1.0f)) {
    return invalid_argument("mask: threshold " + std::to_string(p.threshold) + " outside (0, 1)");
  }
  if (p.radius < 0 || p.radius > kMaskMaxRadius) {
    return invalid_argument("mask: radius " + std::to_string(p.radius) + " outside 0.." +
                            std::to_string(kMaskMaxRadius));
  }
  if (p.foreground == 0) return invalid_argument("mask: foreground must be 1..255");
  if (p.target_class < -1) return invalid_argument("mask: target_class must be -1 or a class id");
  if (call.results != nullptr) return invalid_argument("mask: takes an output batch, not results");
  if (call.out.count != call.in.count) {
    return invalid_argument("mask: " + std::to_string(call.in.count) + " inputs but " +
                            std::to_string(call.out.count) + " outputs");
  }
  if (call.in.space != call.out.space) return invalid_argument("mask: input and output in different memory spaces");
  const int32_t channels = call.in.count > 0 ? call.in[0].channels : 1;
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out = call.out[i];
    const std::string at = "mask: image " + std::to_string(i) + ": ";
    if (in.type != PixelType::kF32 && in.type != PixelType::kF16) {
      return invalid_argument(at + "input must be float32 or float16 logits, not " + pixel_type_name(in.type));
    }
    if (in.channels != channels) return invalid_argument(at + "every input needs the same channel count");
    if (in.channels > kMaskMaxChannels) {
      return invalid_argument(at + "more than " + std::to_string(kMaskMaxChannels) + " channels");
    }
    if (in.channels > 1 && in.layout != Layout::kCHW) return invalid_argument(at + "input must be CHW (planar logits)");
    if (in.row_stride > INT32_MAX || out.row_stride > INT32_MAX) return invalid_argument(at + "row stride too large");
    if (out.type != PixelType::kU8) return invalid_argument(at + "output must be uint8");
    if (out.channels != 1) return invalid_argument(at + "output must have 1 channel");
    if (out.width != in.width || out.height != in.height) {
      return invalid_argument(at + "output size " + std::to_string(out.width) + "x" + std::to_string(out.height) +
                              " differs from the input's " + std::to_string(in.width) + "x" +
                              std::to_string(in.height));
    }
  }
  if (p.target_class >= channels) {
    return invalid_argument("mask: target_class " + std::to_string(p.target_class) + " >= channel count " +
                            std::to_string(channels));
  }
  if (p.activation == MaskActivation::kSoftmax && channels == 1 && call.in.count > 0) {
    return invalid_argument("mask: softmax needs more than one channel (use sigmoid for one)");
  }
  return Status::ok();
}

float mask_logit_threshold(float t) {
  const double td = t;
  const double logit = std::log(td / (1.0 - td));
  float f = static_cast<float>(logit);
  if (static_cast<double>(f) < logit) f = std::nextafter(f, INFINITY);
  return f;
}

KilnMaskParams mask_params_resolve(const MaskParams& params, int32_t channels) {
  KilnMaskParams p{};
  MaskActivation act = params.activation;
  if (act == MaskActivation::kAuto) act = channels == 1 ? MaskActivation::kSigmoid : MaskActivation::kSoftmax;
  p.activation = act == MaskActivation::kSoftmax   ? KILN_MASK_ACT_SOFTMAX
                 : act == MaskActivation::kSigmoid ? KILN_MASK_ACT_SIGMOID
                                                   : KILN_MASK_ACT_NONE;
  p.target = params.target_class;
  if (p.target < 0 && channels == 1) p.target = 0;  // one channel: its binary mask
  p.threshold = params.threshold;
  p.logit_threshold = mask_logit_threshold(params.threshold);
  p.foreground = params.foreground;
  p.radius = params.smoothing == MaskSmoothing::kNone ? 0 : params.radius;
  return p;
}

void mask_largest_component(const ImageView& mask) {
  const int32_t w = mask.width;
  const int32_t h = mask.height;
  const size_t n = static_cast<size_t>(w) * static_cast<size_t>(h);
  // Labels in raster order of each component's first pixel (a flood fill started from each unlabelled pixel).
  std::vector<int32_t> label(n, 0);
  std::vector<int64_t> sizes(1, 0);
  std::vector<int32_t> stack;
  for (int32_t y = 0; y < h; ++y) {
    const auto* row = mask.row<const uint8_t>(y);
    for (int32_t x = 0; x < w; ++x) {
      const size_t at = static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x);
      if (row[x] == 0 || label[at] != 0) continue;
      const auto id = static_cast<int32_t>(sizes.size());
      int64_t size = 0;
      label[at] = id;
      stack.assign(1, static_cast<int32_t>(at));
      while (!stack.empty()) {
        const int32_t p = stack.back();
        stack.pop_back();
        ++size;
        const int32_t py = p / w;
        const int32_t px = p % w;
        for (int32_t dy = -1; dy <= 1; ++dy) {
          const int32_t qy = py + dy;
          if (qy < 0 || qy >= h) continue;
          const auto* qrow = mask.row<const uint8_t>(qy);
          for (int32_t dx = -1; dx <= 1; ++dx) {
            const int32_t qx = px + dx;
            if (qx < 0 || qx >= w || qrow[qx] == 0) continue;
            const size_t q = static_cast<size_t>(qy) * static_cast<size_t>(w) + static_cast<size_t>(qx);
            if (label[q] != 0) continue;
            label[q] = id;
            stack.push_back(static_cast<int32_t>(q));
          }
        }
      }
      sizes.push_back(size);
    }
  }
  int32_t keep = 0;
  for (size_t id = 1; id < sizes.size(); ++id) {
    if (sizes[id] > sizes[static_cast<size_t>(keep)]) keep = static_cast<int32_t>(id);
  }
  if (keep == 0) return;
  for (int32_t y = 0; y < h; ++y) {
    auto* row = mask.row<uint8_t>(y);
    for (int32_t x = 0; x < w; ++x) {
      if (label[static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)] != keep) row[x] = 0;
    }
  }
}

}  // namespace kiln
