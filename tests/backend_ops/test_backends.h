// GPU backends for tests, created directly (not through the process registry) so OpenCL CPU devices such as
// PoCL are used: CI machines have no GPU, and PoCL runs the real OpenCL kernels.
#pragma once

#include <memory>

#include "kiln/device.h"

namespace kiln::test {

inline Result<std::unique_ptr<Backend>> gpu_backend_for_test(BackendKind kind, uint64_t memory_limit_bytes = 0) {
  BackendOptions options;
  options.opencl_allow_cpu_devices = true;
  options.memory_limit_bytes = memory_limit_bytes;
#if KILN_HAS_CUDA
  if (kind == BackendKind::kCuda) return cuda_backend_create(options);
#endif
#if KILN_HAS_OPENCL
  if (kind == BackendKind::kOpenCL) return opencl_backend_create(options);
#endif
  (void)options;
  return Status(Errc::kNotImplemented, std::string("not compiled into this build"));
}

}  // namespace kiln::test
