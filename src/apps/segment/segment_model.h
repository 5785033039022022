// The segmentation model: its input (size, layout, preprocessing: the packaged model's spec, or for a plain .onnx
// file its input shape with x / 255 RGB) and how its first output becomes a person probability per pixel.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/apps/segment.h"
#include "kiln/infer.h"
#include "kiln/ops/preprocess.h"

namespace kiln {

class SegmentModel {
 public:
  static Result<std::unique_ptr<SegmentModel>> open(const SegmentSettings& settings, const InferOptions& options);

  int32_t input_width() const { return m_width; }
  int32_t input_height() const { return m_height; }
  Layout input_layout() const { return m_layout; }
  const PreprocessParams& preprocess() const { return m_preprocess; }
  InferSession& session() { return *m_session; }
  std::string describe() const;  // "selfie (1 x 3 x 256 x 256 -> N x 1 x 256 x 256, sigmoid applied by the model)"

  // Runs `batch` preprocessed items; probs[i] receives item i's probability map (prob_width x prob_height).
  Status run(const std::vector<float>& input, int64_t batch, std::vector<std::vector<float>>* probs);
  int32_t prob_width() const { return m_prob_width; }
  int32_t prob_height() const { return m_prob_height; }

 private:
  Status output_layout_set(const std::vector<int64_t>& shape);

  std::unique_ptr<InferSession> m_session;
  std::string m_name;
  int32_t m_width = 0, m_height = 0;
  Layout m_layout = Layout::kCHW;
  PreprocessParams m_preprocess;
  SegmentSettings m_settings;
  std::string m_activation;  // resolved: sigmoid | softmax | none ("auto" is settled on the first batch)
  bool m_output_hwc = false;
  int32_t m_channels = 1;
  int32_t m_prob_width = 0, m_prob_height = 0;
};

}  // namespace kiln
