#include "common/gpu_parity.h"

#include <algorithm>

namespace kiln::test {

void GpuParityTest::SetUp() {
  m_saved_isa = cpu_isa_active();
  cpu_isa_set(CpuIsa::kScalar);
  m_backends = gpu_backends_for_parity();
  if (m_backends.empty()) KILN_GPU_SKIP("no GPU backend (CUDA device or OpenCL platform) for parity tests");
  // On the GPU machine the CUDA kernels are what needs checking: OpenCL alone is not enough there.
  const bool cuda =
      std::any_of(m_backends.begin(), m_backends.end(), [](const NamedBackend& b) { return b.name == "cuda"; });
  if (gpu_required() && !cuda) GTEST_FAIL() << "KILN_REQUIRE_GPU=1: no CUDA backend among the parity backends";
  m_cpu = cpu_backend_create();
}

void GpuParityTest::TearDown() { cpu_isa_set(m_saved_isa); }

void cpu_reference_run(Backend& cpu, const OpCall& call) {
  ASSERT_TRUE(op_validate(call).is_ok()) << op_kind_name(call.op);
  ASSERT_TRUE(cpu.run(call, {}).is_ok()) << op_kind_name(call.op);
}

void gpu_run(const NamedBackend& gpu, const OpCall& call) {
  ASSERT_TRUE(gpu.backend->supports(call)) << gpu.name;
  const Status status = gpu.backend->run(call, {});
  ASSERT_TRUE(status.is_ok()) << gpu.name << ": " << status.to_string();
}

void parity_run(Backend& cpu, const NamedBackend& gpu, const OpCall& cpu_call, const VarShapeBatchView& gpu_out) {
  ASSERT_NO_FATAL_FAILURE(cpu_reference_run(cpu, cpu_call));
  OpCall gpu_call = cpu_call;
  gpu_call.out = gpu_out;
  gpu_run(gpu, gpu_call);
}

}  // namespace kiln::test
