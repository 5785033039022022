#include "apps/faces/face_geometry.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kiln/ops/warp.h"

namespace kiln {

namespace {

// Right eye, left eye, nose tip, mouth centre (the mean of the template's mouth corners).
void template_points(float out[4][2]) {
  for (int k = 0; k < 3; ++k) {
    out[k][0] = kArcFaceTemplate112[k][0];
    out[k][1] = kArcFaceTemplate112[k][1];
  }
  out[3][0] = (kArcFaceTemplate112[3][0] + kArcFaceTemplate112[4][0]) / 2;
  out[3][1] = (kArcFaceTemplate112[3][1] + kArcFaceTemplate112[4][1]) / 2;
}

// Where the four points usually are in a detector's face box, as fractions of its width and height.
constexpr float kBoxPoints[4][2] = {{0.30f, 0.38f}, {0.70f, 0.38f}, {0.50f, 0.58f}, {0.50f, 0.78f}};

constexpr float kNoseDepth = 0.6f;  // eye distances in front of the eye line
// The template's nose sits this far from the eyes towards the mouth; eye-to-mouth height in eye distances.
constexpr float kFrontalNoseRatio = (71.7366f - 51.599f) / (92.2848f - 51.599f);
constexpr float kEyeMouthHeight = (92.2848f - 51.599f) / (73.5318f - 38.2946f);

float degrees(float radians) { return radians * 180.0f / std::numbers::pi_v<float>; }

}  // namespace

Status face_alignment_matrix(const FaceDetection& face, float matrix[6]) {
  float dst[4][2];
  template_points(dst);
  float src[4][2];
  for (int k = 0; k < 4; ++k) {
    if (face.landmark_count >= 4) {
      src[k][0] = face.landmarks[k][0];
      src[k][1] = face.landmarks[k][1];
    } else {
      src[k][0] = face.box[0] + kBoxPoints[k][0] * face.box[2];
      src[k][1] = face.box[1] + kBoxPoints[k][1] * face.box[3];
    }
  }
  return similarity_transform_estimate(src, dst, 4, matrix);
}

FacePose face_pose_estimate(const FaceDetection& face) {
  FacePose pose;
  if (face.landmark_count < 4) return pose;
  const auto& p = face.landmarks;
  const float ex = p[kLeftEye][0] - p[kRightEye][0];
  const float ey = p[kLeftEye][1] - p[kRightEye][1];
  const float eye_distance = std::hypot(ex, ey);
  if (eye_distance <= 0) return pose;
  pose.roll = degrees(std::atan2(ey, ex));
  // Into the face's own frame: x along the eye line, y towards the mouth, in eye distances.
  const float ux = ex / eye_distance;
  const float uy = ey / eye_distance;
  const float mid_x = (p[kRightEye][0] + p[kLeftEye][0]) / 2;
  const float mid_y = (p[kRightEye][1] + p[kLeftEye][1]) / 2;
  const auto local = [&](int k, float* x, float* y) {
    const float dx = p[k][0] - mid_x;
    const float dy = p[k][1] - mid_y;
    *x = (dx * ux + dy * uy) / eye_distance;
    *y = (-dx * uy + dy * ux) / eye_distance;
  };
  float nose_x = 0;
  float nose_y = 0;
  float mouth_x = 0;
  float mouth_y = 0;
  local(kNoseTip, &nose_x, &nose_y);
  local(kMouthCentre, &mouth_x, &mouth_y);
  // Turning by yaw shrinks the eye line by cos(yaw) and moves the nose sideways by depth * sin(yaw).
  pose.yaw = degrees(std::atan(nose_x / kNoseDepth));
  const float height = mouth_y > 0 ? mouth_y : kEyeMouthHeight;
  const float ratio = nose_y / height;
  pose.pitch = degrees(std::atan((kFrontalNoseRatio - ratio) * height / kNoseDepth));
  return pose;
}

RectI face_quality_region(const FaceDetection& face, int32_t width, int32_t height) {
  constexpr int32_t kMinSide = 8;  // pixels: a smaller face is measured on 8 x 8 around it
  const int32_t side = std::min({kMinSide, width, height});
  int32_t x0 = static_cast<int32_t>(std::floor(face.box[0]));
  int32_t y0 = static_cast<int32_t>(std::floor(face.box[1]));
  int32_t x1 = static_cast<int32_t>(std::ceil(face.box[0] + face.box[2]));
  int32_t y1 = static_cast<int32_t>(std::ceil(face.box[1] + face.box[3]));
  x0 = std::clamp(x0, 0, width - side);
  y0 = std::clamp(y0, 0, height - side);
  x1 = std::clamp(x1, x0 + side, width);
  y1 = std::clamp(y1, y0 + side, height);
  return {x0, y0, x1 - x0, y1 - y0};
}

}  // namespace kiln
