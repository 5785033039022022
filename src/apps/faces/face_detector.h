// The face detector stage: one ONNX Runtime session of a packaged detector, the letterboxed preprocess of whole
// images and of overlapping tiles (big group photos), decoding, and NMS across tiles, in original image pixels. The
// preprocess writes the model's input where the model reads it (InputStager: device memory on the CUDA provider).
#pragma once

#include <memory>
#include <vector>

#include "apps/faces/face_decode.h"
#include "infer/input_stager.h"
#include "kiln/apps/faces.h"
#include "kiln/ops/resize.h"

namespace kiln {

class FaceDetector {
 public:
  // `executor` places the preprocess; it must outlive the detector.
  static Result<std::unique_ptr<FaceDetector>> open(const FaceSettings& settings, const InferOptions& options,
                                                    OpExecutor& executor);

  // faces[i]: the faces of images[i] (RGB u8), after NMS, highest score first. `batch` regions run per model call.
  // upscale[i]: how much images[i] was enlarged from the photo (the small-face search is judged on the photo).
  // Images in device memory are read there, or refused (NotImplemented, nothing found) where the device path is
  // closed (device_path() is null): the caller passes the host's copies then.
  Status detect(const VarShapeBatchView& images, int64_t batch, std::vector<std::vector<FaceDetection>>* faces,
                const std::vector<int32_t>* upscale = nullptr);
  InferReport report() const { return m_session->report(); }
  // The backend whose device memory the model reads while that path is open (InputStager::device_path).
  Backend* device_path() const;
  // Where the model read its input: InputStager::where.
  std::string model_input() const { return m_stager->where(m_session->report()); }

  // The regions of a width x height image the detector looks at: the whole image, then tiles when small faces are
  // searched (settings.small_faces), larger levels first; `upscale`: the image is the photo enlarged this much.
  std::vector<RectI> regions(int32_t width, int32_t height, int32_t upscale = 1) const;

 private:
  // Runs the model on `regions` (batch at a time) and returns each region's decoded faces in image pixels.
  Status run_regions(const VarShapeBatchView& images, const std::vector<std::pair<int64_t, RectI>>& regions,
                     int64_t batch, std::vector<std::vector<FaceDetection>>* per_region);
  // UltraFace finds boxes only: the landmarks the alignment needs come from the near-face BlazeFace model run on a
  // crop twice the face's size.
  Status refine(const VarShapeBatchView& images, int64_t batch, std::vector<std::vector<FaceDetection>>* faces);

  FaceSettings m_settings;
  std::unique_ptr<InferSession> m_session;
  std::unique_ptr<InputStager> m_stager;
  StagedInput m_input;                 // reused from batch to batch
  std::vector<HostTensor> m_outputs;   // bound: the model writes each batch's outputs here
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
