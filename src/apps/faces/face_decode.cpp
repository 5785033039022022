#include "apps/faces/face_decode.h"

#include <algorithm>
#include <cmath>

namespace kiln {

namespace {

float sigmoid_clipped(float logit) { return 1.0f / (1.0f + std::exp(-std::clamp(logit, -50.0f, 50.0f))); }

}  // namespace

std::vector<Anchor> blazeface_anchors(int32_t input_size) {
  const int32_t base = input_size / 16;  // 8 for 128, 16 for 256
  const int32_t strides[4] = {base, 2 * base, 2 * base, 2 * base};
  std::vector<Anchor> anchors;
  for (int32_t layer = 0; layer < 4;) {
    int32_t per_cell = 0;
    const int32_t stride = strides[layer];
    while (layer < 4 && strides[layer] == stride) {
      per_cell += 2;
      ++layer;
    }
    const int32_t grid = input_size / stride;
    for (int32_t y = 0; y < grid; ++y) {
      for (int32_t x = 0; x < grid; ++x) {
        for (int32_t k = 0; k < per_cell; ++k) {
          anchors.push_back({(static_cast<float>(x) + 0.5f) / static_cast<float>(grid),
                             (static_cast<float>(y) + 0.5f) / static_cast<float>(grid)});
        }
      }
    }
  }
  return anchors;
}

std::vector<FaceDetection> blazeface_decode(std::span<const float> logits, std::span<const float> regressors,
                                            std::span<const Anchor> anchors, int32_t input_size, float min_score) {
  std::vector<FaceDetection> faces;
  const auto size = static_cast<float>(input_size);
  for (size_t i = 0; i < anchors.size() && i < logits.size(); ++i) {
    const float score = sigmoid_clipped(logits[i]);
    if (score < min_score) continue;
    const float* r = regressors.data() + i * 16;
    const float cx = r[0] + anchors[i].cx * size;
    const float cy = r[1] + anchors[i].cy * size;
    FaceDetection face;
    face.box[0] = cx - r[2] / 2;
    face.box[1] = cy - r[3] / 2;
    face.box[2] = r[2];
    face.box[3] = r[3];
    face.score = score;
    face.landmark_count = 6;
    for (int k = 0; k < 6; ++k) {
      face.landmarks[k][0] = r[4 + 2 * k] + anchors[i].cx * size;
      face.landmarks[k][1] = r[5 + 2 * k] + anchors[i].cy * size;
    }
    faces.push_back(face);
  }
  return faces;
}

std::vector<FaceDetection> ultraface_decode(std::span<const float> scores, std::span<const float> boxes,
                                            int32_t input_width, int32_t input_height, float min_score) {
  std::vector<FaceDetection> faces;
  const size_t n = std::min(scores.size() / 2, boxes.size() / 4);
  for (size_t i = 0; i < n; ++i) {
    const float score = scores[2 * i + 1];
    if (score < min_score) continue;
    const float* b = boxes.data() + 4 * i;
    FaceDetection face;
    face.box[0] = b[0] * static_cast<float>(input_width);
    face.box[1] = b[1] * static_cast<float>(input_height);
    face.box[2] = (b[2] - b[0]) * static_cast<float>(input_width);
    face.box[3] = (b[3] - b[1]) * static_cast<float>(input_height);
    face.score = score;
    if (face.box[2] > 0 && face.box[3] > 0) faces.push_back(face);
  }
  return faces;
}

float face_iou(const FaceDetection& a, const FaceDetection& b) {
  const float x0 = std::max(a.box[0], b.box[0]);
  const float y0 = std::max(a.box[1], b.box[1]);
  const float x1 = std::min(a.box[0] + a.box[2], b.box[0] + b.box[2]);
  const float y1 = std::min(a.box[1] + a.box[3], b.box[1] + b.box[3]);
  const float inter = std::max(0.0f, x1 - x0) * std::max(0.0f, y1 - y0);
  const float uni = a.box[2] * a.box[3] + b.box[2] * b.box[3] - inter;
  return uni > 0 ? inter / uni : 0.0f;
}

std::vector<FaceDetection> face_nms(std::vector<FaceDetection> faces, float iou, bool weighted) {
  std::stable_sort(faces.begin(), faces.end(),
                   [](const FaceDetection& a, const FaceDetection& b) { return a.score > b.score; });
  std::vector<FaceDetection> kept;
  std::vector<bool> used(faces.size(), false);
  for (size_t i = 0; i < faces.size(); ++i) {
    if (used[i]) continue;
    used[i] = true;
    FaceDetection best = faces[i];
    if (!weighted) {
      for (size_t j = i + 1; j < faces.size(); ++j) {
        if (!used[j] && face_iou(best, faces[j]) > iou) used[j] = true;
      }
      kept.push_back(best);
      continue;
    }
    double total = best.score;
    double box[4];
    double marks[6][2] = {};
    for (int k = 0; k < 4; ++k) box[k] = static_cast<double>(best.box[k]) * best.score;
    for (int k = 0; k < best.landmark_count; ++k) {
      marks[k][0] = static_cast<double>(best.landmarks[k][0]) * best.score;
      marks[k][1] = static_cast<double>(best.landmarks[k][1]) * best.score;
    }
    for (size_t j = i + 1; j < faces.size(); ++j) {
      if (used[j] || face_iou(faces[i], faces[j]) <= iou) continue;
      used[j] = true;
      const FaceDetection& f = faces[j];
      total += f.score;
      for (int k = 0; k < 4; ++k) box[k] += static_cast<double>(f.box[k]) * f.score;
      for (int k = 0; k < std::min(best.landmark_count, f.landmark_count); ++k) {
        marks[k][0] += static_cast<double>(f.landmarks[k][0]) * f.score;
        marks[k][1] += static_cast<double>(f.landmarks[k][1]) * f.score;
      }
    }
    for (int k = 0; k < 4; ++k) best.box[k] = static_cast<float>(box[k] / total);
    for (int k = 0; k < best.landmark_count; ++k) {
      best.landmarks[k][0] = static_cast<float>(marks[k][0] / total);
      best.landmarks[k][1] = static_cast<float>(marks[k][1] / total);
    }
    kept.push_back(best);
  }
  return kept;
}

}  // namespace kiln
