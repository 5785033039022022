// The frame of the GPU-vs-CPU parity tests in tests/backend_ops/: a fixture that skips without a GPU backend and
// holds the CPU reference, and calls run on either side with fatal failures that name the backend. Wrap the run
// helpers in ASSERT_NO_FATAL_FAILURE.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "common/gpu_required.h"
#include "common/image_ops_util.h"
#include "core/cpu_isa.h"
#include "kiln/device.h"
#include "kiln/ops.h"

namespace kiln::test {

// Use as `using FamilyParity = test::GpuParityTest;` and TEST_F(FamilyParity, ...).
class GpuParityTest : public ::testing::Test {
 protected:
  // The CPU runs in reference mode (KILN_CPU_ISA=scalar: the per-pixel _px.h math, no fast paths) for the test.
  void SetUp() override;
  void TearDown() override;

  std::vector<NamedBackend> m_backends;  // every GPU backend of this machine, at least one
  std::unique_ptr<Backend> m_cpu;        // the reference
  CpuIsa m_saved_isa = CpuIsa::kScalar;
};

// Validates `call` and runs it on the CPU reference.
void cpu_reference_run(Backend& cpu, const OpCall& call);
// Runs `call` on a GPU backend, which must support it.
void gpu_run(const NamedBackend& gpu, const OpCall& call);
// The CPU reference run of `cpu_call`, then the same call on `gpu` writing into `gpu_out`.
void parity_run(Backend& cpu, const NamedBackend& gpu, const OpCall& cpu_call, const VarShapeBatchView& gpu_out);

}  // namespace kiln::test
