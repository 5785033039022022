// GPU backends for tests, created directly (not through the process registry) so OpenCL CPU devices such as
// PoCL are used: CI machines have no GPU, and PoCL runs the real OpenCL kernels.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "common/gpu_required.h"
#include "core/fault.h"
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

// Fixture of one backend's tests: m_backend is a fresh backend of kind `kKind` (skipped where none can be
// created), and injected faults are cleared after each test.
template <BackendKind kKind>
class GpuBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = gpu_backend_for_test(kKind);
    if (!created.is_ok()) KILN_GPU_SKIP(backend_kind_name(kKind) << ": " << created.status().message());
    m_backend = std::move(created).value();
  }
  void TearDown() override { ASSERT_TRUE(fault_configure("").is_ok()); }

  Backend& backend() { return *m_backend; }

  std::unique_ptr<Backend> m_backend;
};

}  // namespace kiln::test
