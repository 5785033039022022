// The matte family's host side shared by every backend: validation and the resolved kernel parameters.
#include "ops/matte.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace kiln {

namespace {

bool region_whole(const MatteRegion& r) { return r.width <= 0.0f || r.height <= 0.0f; }

// A composite's frame or background: u8 RGB HWC at the output's size.
Status composite_image_check(const ImageView& image, const ImageView& out, const char* what, const std::string& at) {
  if (image.data == nullptr || image.type != PixelType::kU8 || image.channels != 3 || image.layout != Layout::kHWC ||
      image.width != out.width || image.height != out.height) {
    return invalid_argument(at + "the " + what + " must be uint8 RGB HWC of the output's " + std::to_string(out.width) +
                            "x" + std::to_string(out.height));
  }
  if (image.row_stride < int64_t{3} * image.width || image.row_stride > INT32_MAX) {
    return invalid_argument(at + "the " + what + "'s row stride is wrong");
  }
  return Status::ok();
}

}  // namespace

Status matte_validate(const OpCall& call) {
  const auto* params = static_cast<const MatteParams*>(call.params);
  if (params == nullptr) return invalid_argument("matte: no parameters");
  const MatteParams& p = *params;
  if (static_cast<uint8_t>(p.output) > static_cast<uint8_t>(MatteOutput::kComposite)) {
    return invalid_argument("matte: unknown output");
  }
  const bool composite = p.output == MatteOutput::kComposite;
  if (composite && (p.frames == nullptr || p.backgrounds == nullptr)) {
    return invalid_argument("matte: a composite needs its frames and backgrounds");
  }
  if (!(p.threshold > 0.0f && p.threshold < 1.0f)) {
    return invalid_argument("matte: threshold " + std::to_string(p.threshold) + " outside (0, 1)");
  }
  if (!(p.feather >= 0.0f && p.feather <= 1.0f)) {
    return invalid_argument("matte: feather " + std::to_string(p.feather) + " outside [0, 1]");
  }
  if (p.output == MatteOutput::kMask && p.foreground == p.background) {
    return invalid_argument("matte: foreground and background are both " + std::to_string(p.foreground));
  }
  const MatteRegion& r = p.region;
  if (!std::isfinite(r.x) || !std::isfinite(r.y) || !std::isfinite(r.width) || !std::isfinite(r.height) ||
      r.x < 0.0f || r.y < 0.0f || r.width < 0.0f || r.height < 0.0f) {
    return invalid_argument("matte: the region needs finite, non-negative coordinates and sizes");
  }
  if (call.out.count != call.in.count) {
    return invalid_argument("matte: " + std::to_string(call.in.count) + " inputs but " +
                            std::to_string(call.out.count) + " outputs");
  }
  if (call.in.space != call.out.space) return invalid_argument("matte: input and output in different memory spaces");
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out = call.out[i];
    const std::string at = "matte: image " + std::to_string(i) + ": ";
    if (in.type != PixelType::kF32) {
      return invalid_argument(at + "input must be float32 probabilities, not " + pixel_type_name(in.type));
    }
    if (in.channels != 1) return invalid_argument(at + "input must have 1 channel");
    const int32_t channels = composite ? 3 : 1;
    if (out.type != PixelType::kU8 || out.channels != channels || (composite && out.layout != Layout::kHWC)) {
      return invalid_argument(at + "output must be uint8, " + (composite ? "RGB HWC" : "1 channel"));
    }
    if (composite) KILN_TRY(composite_image_check(p.frames[i], out, "frame", at));
    if (composite) KILN_TRY(composite_image_check(p.backgrounds[i], out, "background", at));
    if (in.row_stride > INT32_MAX || out.row_stride > INT32_MAX) return invalid_argument(at + "row stride too large");
    if (!region_whole(r) && (r.x + r.width > static_cast<float>(in.width) ||
                             r.y + r.height > static_cast<float>(in.height))) {
      return invalid_argument(at + "the region reaches outside the " + std::to_string(in.width) + "x" +
                              std::to_string(in.height) + " map");
    }
  }
  return Status::ok();
}

KilnMatteParams matte_params_resolve(const MatteParams& params) {
  KilnMatteParams p{};
  p.alpha = params.output == MatteOutput::kMask ? 0 : 1;
  p.composite = params.output == MatteOutput::kComposite ? 1 : 0;
  p.foreground = params.foreground;
  p.background = params.background;
  p.threshold = params.threshold;
  const float band = std::max(params.feather, 1e-3f);  // a zero band would divide by zero: a hard edge instead
  p.alpha_low = params.threshold - band / 2;
  p.alpha_scale = 1.0f / band;
  p.region_x = params.region.x;
  p.region_y = params.region.y;
  p.region_width = params.region.width;
  p.region_height = params.region.height;
  return p;
}

const std::array<float, 256>& matte_blend_units() {
  static const std::array<float, 256> units = [] {
    std::array<float, 256> u{};
    for (size_t k = 0; k < u.size(); ++k) u[k] = static_cast<float>(k) / 255.0f;
    return u;
  }();
  return units;
}

std::shared_ptr<const void> matte_params_slice(const void* params, int64_t first) {
  auto sliced = std::make_shared<MatteParams>(*static_cast<const MatteParams*>(params));
  if (sliced->frames != nullptr) sliced->frames += first;
  if (sliced->backgrounds != nullptr) sliced->backgrounds += first;
  return sliced;
}

MatteTaps matte_taps_make(int32_t out_size, float start, float extent, int32_t in_size) {
  MatteTaps t;
  t.i0.resize(out_size);
  t.i1.resize(out_size);
  t.w.resize(out_size);
  for (int32_t i = 0; i < out_size; ++i) {
    kiln_px_linear_tap(i, out_size, start, extent, in_size, &t.i0[i], &t.i1[i], &t.w[i]);
  }
  return t;
}

}  // namespace kiln
