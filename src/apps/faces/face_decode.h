// From detector outputs to faces: BlazeFace's SSD anchors and box/keypoint decoding, UltraFace's corner boxes, and
// non-maximum suppression (weighted, as MediaPipe blends overlapping boxes, or plain). Pure functions on one
// image's (or tile's) outputs; coordinates are in the model input's pixels until the caller maps them back.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kiln/apps/faces.h"

namespace kiln {

struct Anchor {
  float cx = 0;  // centre, as a fraction of the input size
  float cy = 0;
};

// MediaPipe's SSD anchors for BlazeFace: 4 layers with strides {s, 2s, 2s, 2s} (s = 8 for the 128 model, 16 for
// the 256 model), 2 anchors per cell per layer, layers of equal stride merged per cell: 512 + 384 = 896 anchors.
std::vector<Anchor> blazeface_anchors(int32_t input_size);

// One image's BlazeFace outputs, anchors in order: score logits (896) and regressors (896 x 16: cx, cy, w, h, then
// six keypoints x, y, in input pixels relative to the anchor). Faces with sigmoid(score) >= min_score, in input
// pixels, 6 landmarks each.
std::vector<FaceDetection> blazeface_decode(std::span<const float> logits, std::span<const float> regressors,
                                            std::span<const Anchor> anchors, int32_t input_size, float min_score);

// One image's UltraFace outputs: scores (n x 2, column 1 = face) and corner boxes (n x 4, normalised). Faces with
// score >= min_score, in input pixels (input_width x input_height), no landmarks.
std::vector<FaceDetection> ultraface_decode(std::span<const float> scores, std::span<const float> boxes,
                                            int32_t input_width, int32_t input_height, float min_score);

float face_iou(const FaceDetection& a, const FaceDetection& b);

// Highest score first; every face overlapping a kept one by more than `iou` is suppressed, or, when `weighted`,
// blended into it (box and landmarks averaged with the scores as weights, the kept score unchanged).
std::vector<FaceDetection> face_nms(std::vector<FaceDetection> faces, float iou, bool weighted);

}  // namespace kiln
