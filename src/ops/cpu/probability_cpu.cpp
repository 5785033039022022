// The probability family on the CPU: the reference implementation, kiln_prob_output per pixel (the uncertainty
// weights from a table of kiln_prob_uncertainty_step: the same values), threaded by rows.
#include <vector>

#include "core/thread_pool.h"
#include "ops/image_desc.h"
#include "ops/probability.h"

namespace kiln {

const float* probability_uncertainty_steps() {
  static const std::vector<float> table = [] {
    std::vector<float> t(KILN_PROB_UNCERTAINTY_STEPS + 1);
    for (int32_t i = 0; i <= KILN_PROB_UNCERTAINTY_STEPS; ++i) t[static_cast<size_t>(i)] = kiln_prob_uncertainty_step(i);
    return t;
  }();
  return table.data();
}

Status probability_cpu(const OpCall& call, ThreadPool* pool) {
  if (call.in.space != MemorySpace::kHost || call.out.space != MemorySpace::kHost) {
    return invalid_argument("probability: the CPU takes host batches only");
  }
  KilnProbabilityParams p = probability_params_resolve(*static_cast<const ProbabilityParams*>(call.params));
  const bool smooth = p.smooth != 0;
  p.smooth = 0;  // the CPU smooths with the table below
  const float* steps = probability_uncertainty_steps();
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out = call.out[i];
    const KilnImageDesc d = image_desc(in);
    const auto* base = static_cast<const uint8_t*>(in.data);
    const auto body = [&](int64_t begin, int64_t end) {
      for (auto y = static_cast<int32_t>(begin); y < end; ++y) {
        float* row = out.row<float>(y);
        for (int32_t x = 0; x < in.width; ++x) {
          const float v = kiln_prob_at(base, d, x, y, p);
          row[x] = smooth ? kiln_prob_smooth(v, row[x], steps[kiln_prob_step_of(v)], p.temporal) : v;
        }
      }
    };
    parallel_for(pool, in.height, body);
  }
  return Status::ok();
}

}  // namespace kiln
