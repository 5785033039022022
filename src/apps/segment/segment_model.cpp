#include "apps/segment/segment_model.h"

#include <algorithm>
#include <cmath>
#include <span>

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

namespace {

// A model value as a person probability: through the sigmoid when the model gives logits; NaN and inf count as
// background.
float probability_of(float v, bool sigmoid) {
  if (sigmoid) v = 1.0f / (1.0f + std::exp(-std::clamp(v, -50.0f, 50.0f)));
  return std::isfinite(v) ? std::clamp(v, 0.0f, 1.0f) : 0.0f;
}

}  // namespace

Status SegmentModel::run(InputStager& stager, const StagedInput& input, std::vector<std::vector<float>>* probs,
                         int32_t* width, int32_t* height) {
  const int64_t batch = input.items;
  KILN_TRY(stager.run(input, &m_outputs));
  if (m_outputs.empty()) return invalid_argument("the model returned no output");
  const HostTensor& out = m_outputs[0];
  KILN_TRY_ASSIGN(const OutputLayout layout, output_layout(out.shape));  // symbolic sizes are known now
  const int64_t plane = static_cast<int64_t>(layout.width) * layout.height;
  const int32_t channels = layout.channels;
  if (out.shape.empty() || out.shape[0] != batch || plane <= 0 || out.elements() != batch * plane * channels) {
    return invalid_argument("the model's output does not hold one mask per frame");
  }
  if (channels > 1 && m_settings.person_class >= channels) {
    return invalid_argument("person_class " + std::to_string(m_settings.person_class) + " is outside the model's " +
                            std::to_string(channels) + " classes");
  }
  const std::span<const float> values = out.values();
  if (m_activation == "auto") {  // settled once, on the first batch
    const bool within = std::all_of(values.begin(), values.end(), [](float v) { return v >= 0.0f && v <= 1.0f; });
    m_activation = channels > 1 ? "softmax" : within ? "none" : "sigmoid";
  }
  const bool sigmoid = m_activation == "sigmoid";
  const bool softmax = m_activation == "softmax";
  const int32_t person = channels == 1 ? 0 : m_settings.person_class;
  probs->resize(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<float>& p = (*probs)[static_cast<size_t>(b)];
    p.resize(static_cast<size_t>(plane));
    const float* item = values.data() + b * plane * channels;
    const auto at = [&](int64_t i, int32_t c) {
      return layout.hwc ? item[i * channels + c] : item[static_cast<int64_t>(c) * plane + i];
    };
    if (!softmax) {
      const int64_t step = layout.hwc ? channels : 1;
      const float* from = layout.hwc ? item + person : item + static_cast<int64_t>(person) * plane;
      for (int64_t i = 0; i < plane; ++i) p[static_cast<size_t>(i)] = probability_of(from[i * step], sigmoid);
      continue;
    }
    for (int64_t i = 0; i < plane; ++i) {
      float top = at(i, 0);
      for (int32_t c = 1; c < channels; ++c) top = std::max(top, at(i, c));
      float sum = 0;
      for (int32_t c = 0; c < channels; ++c) sum += std::exp(at(i, c) - top);
      p[static_cast<size_t>(i)] = probability_of(std::exp(at(i, person) - top) / sum, false);
    }
  }
  *width = layout.width;
  *height = layout.height;
  return Status::ok();
}

}  // namespace kiln
