#include "apps/segment/segment_model.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "ops/probability.h"

namespace kiln {

Result<std::unique_ptr<SegmentModel>> SegmentModel::open(const SegmentSettings& settings, const InferOptions& options) {
  auto model = std::unique_ptr<SegmentModel>(new SegmentModel());
  model->m_settings = settings;
  KILN_TRY_ASSIGN(const std::string path, model_path_resolve(settings.model));
  KILN_TRY_ASSIGN(model->m_session, InferSession::open(path, options));
  const ModelInfo& info = model->m_session->info();
  if (info.inputs.empty() || info.outputs.empty()) return invalid_argument(path + ": the model has no input or output");

  auto packaged = packaged_model(settings.model);
  if (packaged.is_ok()) {
    const ModelInput& in = packaged.value().input;
    model->m_width = in.width;
    model->m_height = in.height;
    model->m_layout = model_input_layout(in);
    model->m_preprocess = model_preprocess_params(in);
  } else {
    // A plain file: N x 3 x H x W or N x H x W x 3, RGB, x / 255.
    const std::vector<int64_t>& s = info.inputs[0].shape;
    if (s.size() != 4 || !((s[1] == 3 && s[2] > 0 && s[3] > 0) || (s[3] == 3 && s[1] > 0 && s[2] > 0))) {
      return invalid_argument(path + ": segment needs an image input N x 3 x H x W or N x H x W x 3 with a fixed "
                              "size; this model's input is " + info.inputs[0].shape_text());
    }
    model->m_layout = s[1] == 3 ? Layout::kCHW : Layout::kHWC;
    model->m_height = static_cast<int32_t>(model->m_layout == Layout::kCHW ? s[2] : s[1]);
    model->m_width = static_cast<int32_t>(model->m_layout == Layout::kCHW ? s[3] : s[2]);
    PreprocessParams p;
    p.scale = 1.0f / 255.0f;
    std::fill(std::begin(p.mean), std::end(p.mean), 0.0f);
    std::fill(std::begin(p.std), std::end(p.std), 1.0f);
    model->m_preprocess = p;
  }
  model->m_preprocess.fit = settings.letterbox ? ResizeFit::kLetterbox : ResizeFit::kStretch;
  KILN_TRY_ASSIGN(const OutputLayout out, output_layout(info.outputs[0].shape));
  model->m_channels = out.channels;
  model->m_prob_width = out.width > 0 ? out.width : model->m_width;
  model->m_prob_height = out.height > 0 ? out.height : model->m_height;
  if (settings.activation != "auto" && settings.activation != "sigmoid" && settings.activation != "softmax" &&
      settings.activation != "none") {
    return invalid_argument("activation must be auto, sigmoid, softmax or none");
  }
  model->m_activation = settings.activation;
  if (model->m_activation == "auto" && model->m_channels > 1) model->m_activation = "softmax";
  if (model->m_channels > 1 && (settings.person_class < 0 || settings.person_class >= model->m_channels)) {
    return invalid_argument("person_class " + std::to_string(settings.person_class) + " is outside the model's " +
                            std::to_string(model->m_channels) + " classes");
  }
  if (model->m_activation == "softmax" && model->m_channels < 2) {
    return invalid_argument("softmax needs a model output with several channels");
  }
  return model;
}

// Rank 4: N x C x H x W, or N x H x W x C when the last dim is small (<= 32) and the second is not; rank 3: N x H x W.
Result<SegmentModel::OutputLayout> SegmentModel::output_layout(const std::vector<int64_t>& shape) {
  OutputLayout o;
  if (shape.size() == 3) {
    o.height = static_cast<int32_t>(shape[1]);
    o.width = static_cast<int32_t>(shape[2]);
  } else if (shape.size() == 4) {
    o.hwc = shape[3] > 0 && shape[3] <= 32 && !(shape[1] > 0 && shape[1] <= 32);
    o.channels = static_cast<int32_t>(o.hwc ? shape[3] : shape[1]);
    o.height = static_cast<int32_t>(o.hwc ? shape[1] : shape[2]);
    o.width = static_cast<int32_t>(o.hwc ? shape[2] : shape[3]);
  } else {
    return invalid_argument("segment needs a mask output N x C x H x W, N x H x W x C or N x H x W; got rank " +
                            std::to_string(shape.size()));
  }
  return o;
}

Result<SegmentModel::OutputLayout> SegmentModel::output_check(const std::vector<int64_t>& shape, int64_t elements,
                                                              int64_t batch) const {
  KILN_TRY_ASSIGN(const OutputLayout layout, output_layout(shape));  // symbolic sizes are known now
  const int64_t plane = static_cast<int64_t>(layout.width) * layout.height;
  if (shape.empty() || shape[0] != batch || plane <= 0 || elements != batch * plane * layout.channels) {
    return invalid_argument("the model's output does not hold one mask per frame");
  }
  if (layout.channels > 1 && m_settings.person_class >= layout.channels) {
    return invalid_argument("person_class " + std::to_string(m_settings.person_class) + " is outside the model's " +
                            std::to_string(layout.channels) + " classes");
  }
  return layout;
}

ProbabilityParams SegmentModel::probability_params(int32_t channels) const {
  ProbabilityParams p;
  p.activation = m_activation == "softmax" ? ProbabilityActivation::kSoftmax
                 : m_activation == "none"  ? ProbabilityActivation::kNone
                                           : ProbabilityActivation::kSigmoid;
  p.channel = channels == 1 ? 0 : m_settings.person_class;
  return p;
}

Status SegmentModel::probability_fill(const ImageView& output, const ProbabilityParams& params, float* prob) {
  // The probability op's CPU implementation: the same bits as a map made on a device.
  const ImageView map = image_view_packed(prob, output.width, output.height, 1, PixelType::kF32);
  const OpCall call{OpKind::kProbability, &params, VarShapeBatchView{&output, 1, MemorySpace::kHost},
                    VarShapeBatchView{&map, 1, MemorySpace::kHost}, nullptr};
  KILN_TRY(probability_validate(call));
  return probability_cpu(call, nullptr);
}

Status SegmentModel::run(InputStager& stager, const StagedInput& input, std::vector<std::vector<float>>* probs,
                         int32_t* width, int32_t* height) {
  const int64_t batch = input.items;
  KILN_TRY(stager.run(input, &m_outputs));
  if (m_outputs.empty()) return invalid_argument("the model returned no output");
  const HostTensor& out = m_outputs[0];
  KILN_TRY_ASSIGN(const OutputLayout layout, output_check(out.shape, out.elements(), batch));
  const int64_t plane = static_cast<int64_t>(layout.width) * layout.height;
  const int32_t channels = layout.channels;
  m_channels = channels;  // a symbolic count is known now
  const std::span<const float> values = out.values();
  if (m_activation == "auto") {  // settled once, on the first batch
    const bool within = std::all_of(values.begin(), values.end(), [](float v) { return v >= 0.0f && v <= 1.0f; });
    m_activation = channels > 1 ? "softmax" : within ? "none" : "sigmoid";
  }
  const ProbabilityParams params = probability_params(channels);
  probs->resize(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<float>& p = (*probs)[static_cast<size_t>(b)];
    p.resize(static_cast<size_t>(plane));
    const ImageView item = image_view_packed(const_cast<float*>(values.data() + b * plane * channels), layout.width,
                                             layout.height, channels, PixelType::kF32,
                                             layout.hwc ? Layout::kHWC : Layout::kCHW);
    KILN_TRY(probability_fill(item, params, p.data()));
  }
  *width = layout.width;
  *height = layout.height;
  return Status::ok();
}

Status SegmentModel::run_to_device(InputStager& stager, const StagedInput& input, SegmentDeviceOutput* out) {
  if (m_activation == "auto") {
    return Status(Errc::kNotImplemented, "the activation is settled on the values of a batch on the host");
  }
  if (m_activation == "softmax" && m_channels < 2) {  // the probability op needs two channels for it
    return Status(Errc::kNotImplemented, "softmax of a one-channel output is made on the host");
  }
  KILN_TRY(stager.run_to_device(input, &m_device_outputs));
  if (m_device_outputs.empty()) return invalid_argument("the model returned no output");
  const DeviceTensor& t = m_device_outputs[0];
  KILN_TRY_ASSIGN(const OutputLayout layout, output_check(t.shape, t.elements(), input.items));
  const int64_t item_values = static_cast<int64_t>(layout.width) * layout.height * layout.channels;
  out->memory = t.memory;
  out->views.clear();
  for (int64_t b = 0; b < input.items; ++b) {
    out->views.push_back(image_view_packed(t.data() + b * item_values, layout.width, layout.height, layout.channels,
                                           PixelType::kF32, layout.hwc ? Layout::kHWC : Layout::kCHW));
  }
  out->params = probability_params(layout.channels);
  out->width = layout.width;
  out->height = layout.height;
  return Status::ok();
}

}  // namespace kiln
