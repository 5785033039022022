// The calls `kiln bench ops` times: per op name, one OpCall on a batch of seeded images of one size, owning
// everything the call points at. Adding an op is adding its factory to the table in ops_workload.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apps/bench/bench_sizes.h"
#include "kiln/image.h"
#include "kiln/ops.h"
#include "kiln/ops/quality.h"
#include "kiln/status.h"

namespace kiln::bench {

struct Workload {
  OpKind kind = OpKind::kResize;
  std::string shape;                   // "800x600x3 uint8 hwc -> 512x512x3 float32 chw"
  std::shared_ptr<const void> params;  // the family's params struct
  VarShapeBatch in, out;
  std::vector<QualityMetrics> metrics;   // the results of quality
  std::unique_ptr<float[][6]> matrices;  // per-image matrices of warp

  OpCall call() {
    return OpCall{kind, params.get(), in.view(), out.view(), metrics.empty() ? nullptr : metrics.data()};
  }
};

// Every op name, in the order `kiln bench ops` runs them by default.
const std::vector<std::string>& workload_op_names();
std::string workload_op_names_text();  // "fused_preprocess, quality, ..."

// The call `op` makes on `batch` images of `size`: InvalidArgument for an unknown op, OutOfMemory when inputs and
// outputs would need more than 2 GiB.
Result<std::unique_ptr<Workload>> workload_make(const std::string& op, const BenchSize& size, int64_t batch);

}  // namespace kiln::bench
