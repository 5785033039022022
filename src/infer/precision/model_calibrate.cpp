#include "infer/precision/model_calibrate.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln {

namespace {

constexpr int kBins = 2048;

struct Histogram {
  float lo = 0, hi = 0;
  std::vector<int64_t> counts;
};

// Runs `session` on every input and hands each returned tensor to `visit`.
template <typename Visit>
Status inputs_run(InferSession& session, const std::vector<Tensor>& inputs, Visit&& visit) {
  std::vector<Tensor> outputs;
  for (const Tensor& input : inputs) {
    KILN_TRY(session.run(input.data, input.shape, &outputs));
    for (const Tensor& t : outputs) visit(t);
  }
  return Status::ok();
}

// The value below which `share` of the histogram's counts lie: the bin's upper edge, or its lower one for a lower
// tail.
float histogram_quantile(const Histogram& h, double share) {
  int64_t total = 0;
  for (const int64_t c : h.counts) total += c;
  if (total == 0) return h.lo;
  const double want = share * static_cast<double>(total);
  int64_t seen = 0;
  const double width = (static_cast<double>(h.hi) - h.lo) / kBins;
  for (int b = 0; b < kBins; ++b) {
    seen += h.counts[static_cast<size_t>(b)];
    if (static_cast<double>(seen) >= want) return static_cast<float>(h.lo + width * (b + (share < 0.5 ? 0 : 1)));
  }
  return h.hi;
}

}  // namespace

Result<std::map<std::string, TensorRange>> model_ranges_collect(const onnx::ModelProto& model,
                                                                const std::set<std::string>& tensors,
                                                                const std::vector<Tensor>& inputs,
                                                                const ModelQuantizeOptions& options) {
  if (inputs.empty()) return invalid_argument("calibration needs at least one input");
  onnx::ModelProto augmented = model;
  onnx::GraphProto* graph = augmented.mutable_graph();
  std::set<std::string> present;
  for (const auto& o : graph->output()) present.insert(o.name());
  for (const std::string& name : tensors) {
    if (present.count(name) != 0) continue;
    onnx::ValueInfoProto* out = graph->add_output();
    out->set_name(name);
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  KILN_TRY_ASSIGN(const ModelBytes bytes, onnx_model_serialize(augmented));
  InferOptions infer;
  infer.mode = ExecMode::kCpu;
  infer.threads = options.threads;
  infer.warmup_runs = 0;
  KILN_TRY_ASSIGN(std::unique_ptr<InferSession> session, InferSession::open_bytes(bytes, infer, "calibration model"));

  std::map<std::string, TensorRange> ranges;
  KILN_TRY(inputs_run(*session, inputs, [&](const Tensor& t) {
    if (tensors.count(t.name) == 0 || t.data.empty()) return;
    const auto [lo, hi] = std::minmax_element(t.data.begin(), t.data.end());
    auto [it, fresh] = ranges.try_emplace(t.name, TensorRange{*lo, *hi});
    if (!fresh) {
      it->second.min = std::min(it->second.min, *lo);
      it->second.max = std::max(it->second.max, *hi);
    }
  }));
  for (auto& [name, r] : ranges) {
    if (!std::isfinite(r.min) || !std::isfinite(r.max)) {
      return unsupported_format("calibration: tensor " + name + " takes non-finite values (inf or NaN)");
    }
  }
  if (options.method != CalibrationMethod::kPercentile) return ranges;
  if (!(options.percentile > 50.0 && options.percentile <= 100.0)) {
    return invalid_argument("percentile must be in (50, 100]");
  }
  std::map<std::string, Histogram> hists;
  for (const auto& [name, r] : ranges) hists[name] = Histogram{r.min, r.max, std::vector<int64_t>(kBins, 0)};
  KILN_TRY(inputs_run(*session, inputs, [&](const Tensor& t) {
    const auto it = hists.find(t.name);
    if (it == hists.end()) return;
    Histogram& h = it->second;
    const double span = static_cast<double>(h.hi) - h.lo;
    if (!(span > 0)) return;
    for (const float v : t.data) {
      const int b = std::clamp(static_cast<int>((v - h.lo) / span * kBins), 0, kBins - 1);
      ++h.counts[static_cast<size_t>(b)];
    }
  }));
  const double tail = (100.0 - options.percentile) / 100.0;
  for (auto& [name, r] : ranges) {
    const Histogram& h = hists[name];
    if (!(h.hi > h.lo)) continue;
    // A tensor that never goes below zero (after Relu) keeps 0 as its floor; the quantile cuts the long tails.
    if (r.min < 0) r.min = std::min(0.0f, histogram_quantile(h, tail));
    r.max = std::max(0.0f, histogram_quantile(h, 1.0 - tail));
  }
  return ranges;
}

}  // namespace kiln
