// Running an image-op call: placement (mode, GPU_BACKEND, per-op switches), the backend's run, and the reported
// fallback to the CPU when a GPU fails.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kiln/device.h"
#include "kiln/ops.h"
#include "kiln/status.h"

namespace kiln {

class ThreadPool;

struct ExecOptions {
  ExecMode mode = ExecMode::kAuto;
  std::optional<BackendKind> gpu_only;  // GPU_BACKEND=cuda|opencl
  bool fallback_on_error = true;        // a GPU error (device, out of memory) reruns the call on the CPU
  ThreadPool* pool = nullptr;           // CPU worker threads; nullptr = the calling thread only
};

// What happened to one call.
struct ExecReport {
  std::string backend;    // "cpu", "opencl", "cuda"
  std::string placement;  // why that backend
  std::string fallback;   // non-empty when a GPU failed and the CPU reran the call: the GPU's error
};

// Validates the call (InvalidArgument before any backend sees it), places it and runs it.
Status op_run(const OpCall& call, const ExecOptions& exec = {}, ExecReport* report = nullptr);

// Applies the environment to `exec` for `op`: GPU_BACKEND (cpu|auto|cuda|opencl|rocm|mps), then ALL_GPU and the
// op's own switch (op_gpu_switch_name; it wins over ALL_GPU): false keeps the op on the CPU, true lets it use a GPU.
// `notes` receives messages such as "GPU_BACKEND=rocm: ... using OpenCL". InvalidArgument on unparsable values.
Status exec_options_apply_env(OpKind op, ExecOptions* exec, std::vector<std::string>* notes = nullptr);

}  // namespace kiln
