// The segmentation model: its input (size, layout, preprocessing: the packaged model's spec, or for a plain .onnx
// file its input shape with x / 255 RGB) and how its first output becomes a person probability per pixel.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "infer/device_tensor.h"
#include "infer/host_tensor.h"
#include "infer/input_stager.h"
#include "kiln/apps/segment.h"
#include "kiln/infer.h"
#include "kiln/ops/preprocess.h"
#include "kiln/ops/probability.h"

namespace kiln {

// A batch's model output left in the model's device memory (SegmentModel::run_to_device): item i's in views[i]
// (device addresses inside `memory`; f32, the output's channels and layout).
struct SegmentDeviceOutput {
  std::shared_ptr<DeviceBlock> memory;
  std::vector<ImageView> views;
  ProbabilityParams params;  // how each becomes the person's probability (the probability op's; temporal 0)
  int32_t width = 0, height = 0;
};

class SegmentModel {
 public:
  static Result<std::unique_ptr<SegmentModel>> open(const SegmentSettings& settings, const InferOptions& options);

  int32_t input_width() const { return m_width; }
  int32_t input_height() const { return m_height; }
  Layout input_layout() const { return m_layout; }
  const PreprocessParams& preprocess() const { return m_preprocess; }
  InferSession& session() { return *m_session; }

  // Runs a batch `stager` staged; probs[i] receives item i's probability map, *width x *height (the output's size
  // in this run: a symbolic one is known only now). Called from one thread at a time.
  Status run(InputStager& stager, const StagedInput& input, std::vector<std::vector<float>>* probs, int32_t* width,
             int32_t* height);
  // The same with the output left in device memory (InferSession::run_to_device); NotImplemented says why it
  // cannot (the caller runs run()), also before the first batch settled activation "auto" on its values.
  Status run_to_device(InputStager& stager, const StagedInput& input, SegmentDeviceOutput* out);
  // One frame's output (host memory) as its person probability (output's width x height) as the probability op
  // makes it.
  static Status probability_fill(const ImageView& output, const ProbabilityParams& params, float* prob);
  // The map's size as the model declares it (symbolic sizes: the input's). Fixed after open: safe from any thread.
  int32_t prob_width() const { return m_prob_width; }
  int32_t prob_height() const { return m_prob_height; }

 private:
  struct OutputLayout {
    bool hwc = false;
    int32_t channels = 1;
    int32_t width = 0, height = 0;
  };
  static Result<OutputLayout> output_layout(const std::vector<int64_t>& shape);
  // The layout of a batch's output, checked to hold one map per frame and the person's class.
  Result<OutputLayout> output_check(const std::vector<int64_t>& shape, int64_t elements, int64_t batch) const;
  ProbabilityParams probability_params(int32_t channels) const;

  std::unique_ptr<InferSession> m_session;
  std::vector<HostTensor> m_outputs;  // bound: the model writes each batch's outputs here
  std::vector<DeviceTensor> m_device_outputs;  // run_to_device's: a block a batch's frames still hold is replaced
  int32_t m_width = 0, m_height = 0;
  Layout m_layout = Layout::kCHW;
  PreprocessParams m_preprocess;
  SegmentSettings m_settings;
  std::string m_activation;  // resolved: sigmoid | softmax | none ("auto" is settled on the first batch, by run())
  int32_t m_channels = 1;    // of the declared output (a symbolic channel count is settled by run())
  int32_t m_prob_width = 0, m_prob_height = 0;
};

}  // namespace kiln
