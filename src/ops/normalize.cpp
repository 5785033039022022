// The normalize family: validation of a call before any backend sees it.
#include "ops/normalize.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace kiln {

namespace {

// The bytes from an image's first pixel to past its last.
int64_t extent_bytes(const ImageView& v) {
  const int64_t planes = v.channels > 1 ? (v.channels - 1) * v.plane_stride : 0;
  return planes + v.row_stride * v.height;
}

// In place is `out` being `in`: each value is read before it is written, at its own address. An output that
// overlaps the input otherwise (shifted, other strides) writes values another row or thread has still to read.
bool overlaps_other_than_in_place(const ImageView& in, const ImageView& out) {
  const auto* a = static_cast<const uint8_t*>(in.data);
  const auto* b = static_cast<const uint8_t*>(out.data);
  const bool overlap = a < b + extent_bytes(out) && b < a + extent_bytes(in);
  return overlap && !(a == b && in.row_stride == out.row_stride && in.plane_stride == out.plane_stride);
}

}  // namespace

Status normalize_validate(const OpCall& call) {
  const auto& params = *static_cast<const NormalizeParams*>(call.params);
  if (params.mean.empty()) return invalid_argument("normalize: no mean values");
  if (params.mean.size() != params.std.size()) return invalid_argument("normalize: mean and std sizes differ");
  for (size_t c = 0; c < params.std.size(); ++c) {
    if (!std::isfinite(params.mean[c])) return invalid_argument("normalize: mean " + std::to_string(c) + " is not finite");
    if (!std::isfinite(params.std[c]) || params.std[c] == 0.0f) {
      return invalid_argument("normalize: std " + std::to_string(c) + " must be finite and non-zero");
    }
  }
  if (call.out.count != call.in.count) return invalid_argument("normalize: input and output counts differ");
  const auto channels = static_cast<int32_t>(params.mean.size());
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out = call.out[i];
    const std::string at = "normalize: image " + std::to_string(i);
    if (in.type != PixelType::kF32 || out.type != PixelType::kF32) return invalid_argument(at + ": needs float32");
    if (in.layout != Layout::kCHW || out.layout != Layout::kCHW) return invalid_argument(at + ": needs CHW (NCHW)");
    if (in.width != out.width || in.height != out.height) return invalid_argument(at + ": input and output sizes differ");
    if (in.channels != channels || out.channels != channels) {
      return invalid_argument(at + ": has " + std::to_string(in.channels) + " channels, mean/std have " +
                              std::to_string(channels));
    }
    if (in.row_stride > INT32_MAX || out.row_stride > INT32_MAX) return invalid_argument(at + ": row stride too large");
    if (overlaps_other_than_in_place(in, out)) {
      return invalid_argument(at + ": the output overlaps the input without being it (in place: the same view)");
    }
  }
  return Status::ok();
}

}  // namespace kiln
