// The process-wide backend registry: compiled GPU backends that find a device (CUDA, then OpenCL), then the CPU.
#include "kiln/device.h"

#include "core/gpu_budget.h"

namespace kiln {

namespace {

[[maybe_unused]] void add_gpu(BackendRegistry* registry, BackendKind kind, Result<std::unique_ptr<Backend>> created) {
  if (created.is_ok()) {
    registry->add(std::move(created).value(), BackendStatus{kind, true, "ok"});
  } else {
    registry->add(nullptr, BackendStatus{kind, false, created.status().message()});
  }
}

}  // namespace

BackendRegistry& BackendRegistry::instance() {
  static BackendRegistry* registry = [] {
    auto* r = new BackendRegistry();
    r->options_set(backend_options_from_env());
    const BackendOptions opts = r->options().is_ok() ? r->options().value() : BackendOptions{};
#if KILN_HAS_CUDA
    BackendOptions cuda = opts;  // its pool's share of the process's budget; the models get the rest
    cuda.memory_limit_bytes = gpu_budget_split(opts.memory_limit_bytes).pool_bytes;
    add_gpu(r, BackendKind::kCuda, cuda_backend_create(cuda));
#else
    r->add(nullptr, BackendStatus{BackendKind::kCuda, false, "not compiled (configure with KILN_CUDA=ON and a CUDA toolkit)"});
#endif
#if KILN_HAS_OPENCL
    add_gpu(r, BackendKind::kOpenCL, opencl_backend_create(opts));
#else
    r->add(nullptr, BackendStatus{BackendKind::kOpenCL, false, "not compiled (configure with KILN_OPENCL=ON and an OpenCL ICD loader)"});
#endif
    r->add(cpu_backend_create(), BackendStatus{BackendKind::kCpu, true, "always available"});
    (void)opts;
    return r;
  }();
  return *registry;
}

}  // namespace kiln
