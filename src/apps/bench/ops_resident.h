// A `kiln bench ops` workload held where a GPU backend reads it fastest. --resident device: its inputs uploaded once
// into the backend's device memory and its outputs left there, as PyTorch and CV-CUDA users hold their batches, so a
// timed call is the kernels alone. --resident pinned: inputs and outputs in the backend's own host blocks (pinned
// for CUDA, mapped for OpenCL), as a loader that decodes into pinned buffers holds them, so a timed call is the
// copies at the bus's speed and the kernels (bench ops also times two such calls in flight, each on its own
// ResidentCall). Its outputs can be fetched afterwards and compared with the CPU's.
#pragma once

#include <vector>

#include "apps/bench/ops_workload.h"
#include "core/backend_block.h"

namespace kiln::bench {

class ResidentCall {
 public:
  // on_device: NotImplemented from a backend whose device memory has no pointer (the CPU, OpenCL); OutOfMemory when
  // the batches do not fit.
  static Result<ResidentCall> make(Backend& backend, const Workload& workload, bool on_device);

  const OpCall& call() const { return m_call; }
  // The largest |device value - host value| over every output value (u8 levels, float units, or the quality
  // metrics) against `host`, the same workload run on host batches.
  Result<double> max_abs_diff(const Workload& host) const;

 private:
  Backend* m_backend = nullptr;
  bool m_on_device = false;
  DeviceBlock m_in_block, m_out_block;
  HostBlock m_in_host, m_out_host;
  VarShapeBatch m_in, m_out;
  std::vector<QualityMetrics> m_metrics;
  OpCall m_call;
};

// The backend's copy rates between its own host blocks and its device memory in bytes/s, each the best of five
// 64 MiB copies: what bounds a GPU op on pinned host batches. NotImplemented for a backend without device pointers.
struct CopyRates {
  double up = 0;    // host to device
  double down = 0;  // device to host
};
Result<CopyRates> copy_bytes_per_s(Backend& backend);

}  // namespace kiln::bench
