// A `kiln bench ops` workload on device batches (--resident device): its inputs uploaded once into a GPU backend's
// device memory and its outputs left there, as PyTorch and CV-CUDA users hold their batches, so a timed call is
// the kernels alone. Its outputs can be fetched afterwards and compared with the CPU's.
#pragma once

#include <vector>

#include "cli/bench_ops_workload.h"
#include "core/backend_block.h"

namespace kiln::cli {

class ResidentCall {
 public:
  // NotImplemented from a backend whose device memory has no pointer (the CPU, OpenCL), OutOfMemory when the
  // batches do not fit.
  static Result<ResidentCall> make(Backend& backend, const Workload& workload);

  const OpCall& call() const { return m_call; }
  // The largest |device value - host value| over every output value (u8 levels, float units, or the quality
  // metrics) against `host`, the same workload run on host batches.
  Result<double> max_abs_diff(const Workload& host) const;

 private:
  Backend* m_backend = nullptr;
  DeviceBlock m_in_block, m_out_block;
  VarShapeBatch m_in, m_out;
  std::vector<QualityMetrics> m_metrics;
  OpCall m_call;
};

}  // namespace kiln::cli
