// A model against its original: the first output on the same inputs (max / mean abs difference, mask IoU for a
// one-channel map, cosine for an embedding) and the time per inference of each on the CPU provider, measured in
// alternation so that both see the same machine load.
#include <algorithm>
#include <chrono>
#include <cmath>

#include <nlohmann/json.hpp>

#include "kiln/precision.h"

namespace kiln {

namespace {

Result<std::unique_ptr<InferSession>> session_open(const ModelBytes& bytes, const ModelCompareOptions& options,
                                                   const std::string& label) {
  InferOptions infer;
  infer.mode = ExecMode::kCpu;
  infer.threads = options.threads;
  infer.warmup_runs = 1;
  return InferSession::open_bytes(bytes, infer, label);
}

double median(std::vector<double> xs) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  return n % 2 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}

// One item's mask from a probability map, or from logits (sigmoid) when the reference leaves [0, 1].
std::vector<bool> mask_of(const float* v, size_t n, bool logits, float threshold) {
  std::vector<bool> mask(n);
  for (size_t i = 0; i < n; ++i) {
    const float p = logits ? 1.0f / (1.0f + std::exp(-std::clamp(v[i], -50.0f, 50.0f))) : v[i];
    mask[i] = p >= threshold;
  }
  return mask;
}

double iou(const std::vector<bool>& a, const std::vector<bool>& b) {
  int64_t both = 0, either = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    both += a[i] && b[i];
    either += a[i] || b[i];
  }
  return either == 0 ? 1.0 : static_cast<double>(both) / static_cast<double>(either);
}

double cosine(const float* a, const float* b, size_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < n; ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : (aa == bb ? 1.0 : 0.0);
}

}  // namespace

std::string ModelCompareReport::json() const {
  nlohmann::json j = {{"output", output},
                      {"shape", shape},
                      {"items", items},
                      {"max_abs_diff", max_abs_diff},
                      {"mean_abs_diff", mean_abs_diff},
                      {"reference_ms", reference_ms},
                      {"candidate_ms", candidate_ms},
                      {"speedup", speedup},
                      {"threads", threads}};
  if (mask) {
    j["mask_iou"] = {{"mean", mask_iou_mean}, {"min", mask_iou_min}, {"items", mask_items}};
    j["mask_pixels_differ"] = mask_pixels_differ;
  }
  if (embedding) j["cosine"] = {{"mean", cosine_mean}, {"min", cosine_min}};
  return j.dump();
}

Result<ModelCompareReport> model_compare(const ModelBytes& reference, const ModelBytes& candidate,
                                         const std::vector<Tensor>& inputs, const ModelCompareOptions& options) {
  if (inputs.empty()) return invalid_argument("comparing models needs inputs (none given)");
  KILN_TRY_ASSIGN(auto ref, session_open(reference, options, "reference model"));
  KILN_TRY_ASSIGN(auto cand, session_open(candidate, options, "converted model"));
  ModelCompareReport r;
  r.threads = options.threads;
  std::vector<Tensor> a, b;
  double sum_abs = 0, iou_sum = 0, cos_sum = 0;
  int64_t values = 0, differ = 0;
  bool logits = false;
  r.mask_iou_min = r.cosine_min = 1.0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    KILN_TRY(ref->run(inputs[k].data, inputs[k].shape, &a));
    KILN_TRY(cand->run(inputs[k].data, inputs[k].shape, &b));
    if (a.empty() || b.empty() || a[0].shape != b[0].shape) {
      return invalid_argument("the converted model's first output does not have the original's shape");
    }
    const Tensor& x = a[0];
    const Tensor& y = b[0];
    if (k == 0) {
      r.output = x.name;
      r.shape.assign(x.shape.begin() + (x.shape.empty() ? 0 : 1), x.shape.end());
      const auto& s = x.shape;
      r.mask = (s.size() == 4 && s[1] == 1) || s.size() == 3;
      r.embedding = s.size() == 2 && s[1] > 1;
      logits = std::any_of(x.data.begin(), x.data.end(), [](float v) { return v < 0.0f || v > 1.0f; });
    }
    for (size_t i = 0; i < x.data.size(); ++i) {
      const double d = std::fabs(static_cast<double>(x.data[i]) - y.data[i]);
      r.max_abs_diff = std::max(r.max_abs_diff, std::isfinite(d) ? d : INFINITY);
      sum_abs += d;
    }
    values += static_cast<int64_t>(x.data.size());
    const int64_t batch = x.shape.empty() ? 1 : x.shape[0];
    const size_t per = x.data.size() / static_cast<size_t>(std::max<int64_t>(batch, 1));
    for (int64_t n = 0; n < batch; ++n) {
      const float* xv = x.data.data() + n * per;
      const float* yv = y.data.data() + n * per;
      if (r.mask) {
        const std::vector<bool> mx = mask_of(xv, per, logits, options.mask_threshold);
        const std::vector<bool> my = mask_of(yv, per, logits, options.mask_threshold);
        int64_t foreground = 0;
        for (size_t i = 0; i < per; ++i) {
          foreground += mx[i];
          differ += mx[i] != my[i];
        }
        // IoU says little about a nearly empty mask (a frame without a person): such items count in `differ` only.
        if (static_cast<double>(foreground) >= 0.01 * static_cast<double>(per)) {
          const double v = iou(mx, my);
          iou_sum += v;
          r.mask_iou_min = std::min(r.mask_iou_min, v);
          ++r.mask_items;
        }
      }
      if (r.embedding) {
        const double c = cosine(xv, yv, per);
        cos_sum += c;
        r.cosine_min = std::min(r.cosine_min, c);
      }
      ++r.items;
    }
  }
  r.mean_abs_diff = values ? sum_abs / static_cast<double>(values) : 0;
  if (r.mask) {
    r.mask_iou_mean = r.mask_items ? iou_sum / static_cast<double>(r.mask_items) : 1.0;
    r.mask_pixels_differ = values ? static_cast<double>(differ) / static_cast<double>(values) : 0;
  }
  if (r.embedding) r.cosine_mean = cos_sum / static_cast<double>(r.items);
  if (!r.mask) r.mask_iou_min = 0;
  if (!r.embedding) r.cosine_min = 0;

  // Timing: the two models in turns, input by input, until each has had `seconds` (at least one pass).
  std::vector<double> ref_ms, cand_ms;
  double ref_total = 0, cand_total = 0;
  for (size_t k = 0; k < inputs.size() || std::min(ref_total, cand_total) < options.seconds * 1e3; ++k) {
    const Tensor& in = inputs[k % inputs.size()];
    for (int which = 0; which < 2; ++which) {
      InferSession& s = which == 0 ? *ref : *cand;
      const auto t0 = std::chrono::steady_clock::now();
      KILN_TRY(s.run(in.data, in.shape, which == 0 ? &a : &b));
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      (which == 0 ? ref_ms : cand_ms).push_back(ms);
      (which == 0 ? ref_total : cand_total) += ms;
    }
  }
  r.reference_ms = median(ref_ms);
  r.candidate_ms = median(cand_ms);
  r.speedup = r.candidate_ms > 0 ? r.reference_ms / r.candidate_ms : 0;
  return r;
}

}  // namespace kiln
