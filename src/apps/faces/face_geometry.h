// Geometry of a detected face: the similarity transform onto the ArcFace 112 x 112 template, and head pose from the
// landmarks.
#pragma once

#include "kiln/apps/faces.h"

namespace kiln {

// The 2x3 matrix taking the image to the aligned 112 x 112 face: a least-squares similarity from the eyes, nose tip
// and mouth centre to the template's; for a face without landmarks (UltraFace), from points at their usual places
// in the box.
Status face_alignment_matrix(const FaceDetection& face, float matrix[6]);

// Yaw, pitch and roll from the eyes, nose tip and mouth centre, with the nose modelled 0.6 eye distances in front
// of the eye line (a frontal face gives 0, 0, 0). A face without landmarks gets 0, 0, 0.
FacePose face_pose_estimate(const FaceDetection& face);

// The region whose quality is measured: the box, clamped to the image, at least 8 x 8 where the image allows.
RectI face_quality_region(const FaceDetection& face, int32_t width, int32_t height);

}  // namespace kiln
