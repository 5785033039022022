// The warp family: border-mode names, validation, the destination -> source matrices, the similarity estimate
// (Umeyama, closed form in 2-D) and the ArcFace template.
#include "ops/warp.h"

#include <cmath>
#include <string>

namespace kiln {

namespace {

// det of the 2x2 part, in double (cv::invertAffineTransform).
double matrix_det(const float m[6]) {
  return static_cast<double>(m[0]) * static_cast<double>(m[4]) - static_cast<double>(m[1]) * static_cast<double>(m[3]);
}

}  // namespace

// insightface's arcface_dst (python/insightface/utils/face_align.py).
const float kArcFaceTemplate112[5][2] = {
    {38.2946f, 51.6963f}, {73.5318f, 51.5014f}, {56.0252f, 71.7366f}, {41.5493f, 92.3655f}, {70.7299f, 92.2041f}};

Status warp_validate(const OpCall& call) {
  const auto& params = *static_cast<const WarpParams*>(call.params);
  if (std::string(border_mode_name(params.border)) == "?") return invalid_argument("warp: unknown border mode");
  for (float v : params.border_value) {
    if (!std::isfinite(v)) return invalid_argument("warp: border value is not finite");
  }
  if (call.out.count != call.in.count) return invalid_argument("warp: input and output counts differ");
  if (call.in.count > 0 && params.matrices == nullptr) return invalid_argument("warp: no matrices");
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out = call.out[i];
    const std::string at = "warp: image " + std::to_string(i);
    if (in.type != PixelType::kU8 && in.type != PixelType::kF32) return invalid_argument(at + ": needs uint8 or float32");
    if (out.type != in.type) return invalid_argument(at + ": input and output types differ");
    if (in.layout != Layout::kHWC || out.layout != Layout::kHWC) return invalid_argument(at + ": needs HWC");
    if (in.channels != 1 && in.channels != 3 && in.channels != 4) return invalid_argument(at + ": needs 1, 3 or 4 channels");
    if (out.channels != in.channels) return invalid_argument(at + ": input and output channels differ");
    if (in.row_stride > INT32_MAX || out.row_stride > INT32_MAX) return invalid_argument(at + ": row stride too large");
    if (in.width > (1 << 29) || in.height > (1 << 29)) return invalid_argument(at + ": too large");
    const float* m = params.matrices[i];
    for (int k = 0; k < 6; ++k) {
      if (!std::isfinite(m[k])) return invalid_argument(at + ": matrix is not finite");
    }
    if (!params.inverse_map) {
      const double det = matrix_det(m);
      if (det == 0.0 || !std::isfinite(1.0 / det)) return invalid_argument(at + ": matrix is not invertible");
    }
  }
  return Status::ok();
}

std::vector<std::array<float, 6>> warp_source_matrices(const WarpParams& params, int64_t count) {
  std::vector<std::array<float, 6>> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const float* m = params.matrices[i];
    auto& r = out[static_cast<size_t>(i)];
    if (params.inverse_map) {
      for (int k = 0; k < 6; ++k) r[static_cast<size_t>(k)] = m[k];
      continue;
    }
    // cv::invertAffineTransform
    const double det = matrix_det(m);
    const double d = det != 0.0 ? 1.0 / det : 0.0;
    const double a11 = m[4] * d;
    const double a22 = m[0] * d;
    const double a12 = -static_cast<double>(m[1]) * d;
    const double a21 = -static_cast<double>(m[3]) * d;
    const double b1 = -a11 * m[2] - a12 * m[5];
    const double b2 = -a21 * m[2] - a22 * m[5];
    r = {static_cast<float>(a11), static_cast<float>(a12), static_cast<float>(b1),
         static_cast<float>(a21), static_cast<float>(a22), static_cast<float>(b2)};
  }
  return out;
}

// Umeyama's least-squares similarity (rotation, uniform scale, translation; no reflection). In 2-D it has a
// closed form: with centred points p (source) and q (destination), a = sum(p.q) / sum|p|^2 and
// b = sum(p x q) / sum|p|^2 give the matrix [a -b tx; b a ty] (a = s cos t, b = s sin t), the same optimum
// skimage's SimilarityTransform.estimate finds.
Status similarity_transform_estimate(const float (*src)[2], const float (*dst)[2], int32_t count, float out[6]) {
  if (src == nullptr || dst == nullptr || out == nullptr) return invalid_argument("similarity: null points");
  if (count < 2) return invalid_argument("similarity: needs at least 2 points");
  double sx = 0, sy = 0, dx = 0, dy = 0;
  for (int32_t i = 0; i < count; ++i) {
    for (int k = 0; k < 2; ++k) {
      if (!std::isfinite(src[i][k]) || !std::isfinite(dst[i][k])) return invalid_argument("similarity: non-finite point");
    }
    sx += src[i][0];
    sy += src[i][1];
    dx += dst[i][0];
    dy += dst[i][1];
  }
  sx /= count;
  sy /= count;
  dx /= count;
  dy /= count;
  double norm = 0, dot = 0, cross = 0;
  for (int32_t i = 0; i < count; ++i) {
    const double px = src[i][0] - sx;
    const double py = src[i][1] - sy;
    const double qx = dst[i][0] - dx;
    const double qy = dst[i][1] - dy;
    norm += px * px + py * py;
    dot += px * qx + py * qy;
    cross += px * qy - py * qx;
  }
  if (!(norm > 1e-12)) return invalid_argument("similarity: source points coincide");
  const double a = dot / norm;
  const double b = cross / norm;
  if (a == 0.0 && b == 0.0) return invalid_argument("similarity: destination points coincide");
  const double tx = dx - (a * sx - b * sy);
  const double ty = dy - (b * sx + a * sy);
  out[0] = static_cast<float>(a);
  out[1] = static_cast<float>(-b);
  out[2] = static_cast<float>(tx);
  out[3] = static_cast<float>(b);
  out[4] = static_cast<float>(a);
  out[5] = static_cast<float>(ty);
  return Status::ok();
}

}  // namespace kiln
