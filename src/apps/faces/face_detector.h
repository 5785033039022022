// The face detector stage: one ONNX Runtime session of a packaged detector, the letterboxed preprocess of whole
// images and of overlapping tiles (big group photos), decoding, and NMS across tiles, in original image pixels.
#pragma once

#include <memory>
#include <vector>

#include "apps/faces/face_decode.h"
#include "kiln/apps/faces.h"
#include "kiln/ops/resize.h"

namespace kiln {

class FaceDetector {
 public:
  static Result<std::unique_ptr<FaceDetector>> open(const FaceSettings& settings, const InferOptions& options);

  // faces[i]: the faces of images[i] (RGB u8), after NMS, highest score first. `batch` regions run per model call.
  // upscale[i]: how much images[i] was enlarged from the photo (the small-face search is judged on the photo).
  Status detect(const VarShapeBatchView& images, OpExecutor& executor, int64_t batch,
                std::vector<std::vector<FaceDetection>>* faces, const std::vector<int32_t>* upscale = nullptr);
  InferReport report() const { return m_session->report(); }

  // The regions of a width x height image the detector looks at: the whole image, then tiles when small faces are
  // searched (settings.small_faces), larger levels first; `upscale`: the image is the photo enlarged this much.
  std::vector<RectI> regions(int32_t width, int32_t height, int32_t upscale = 1) const;

 private:
  // Runs the model on `regions` (batch at a time) and returns each region's decoded faces in image pixels.
  Status run_regions(const VarShapeBatchView& images, const std::vector<std::pair<int64_t, RectI>>& regions,
                     OpExecutor& executor, int64_t batch, std::vector<std::vector<FaceDetection>>* per_region);
  // UltraFace finds boxes only: the landmarks the alignment needs come from the near-face BlazeFace model run on a
  // crop twice the face's size.
  Status refine(const VarShapeBatchView& images, OpExecutor& executor, int64_t batch,
                std::vector<std::vector<FaceDetection>>* faces);

  FaceSettings m_settings;
  std::unique_ptr<InferSession> m_session;
  bool m_blazeface = true;
  int32_t m_input_width = 0;
  int32_t m_input_height = 0;
  Layout m_layout = Layout::kHWC;
  PreprocessParams m_params;
  std::vector<Anchor> m_anchors;
  float m_min_face_fraction = 0;  // the smallest face found, as a fraction of the model input's height
  std::unique_ptr<FaceDetector> m_refiner;  // blazeface-front, for UltraFace's faces
};

}  // namespace kiln
