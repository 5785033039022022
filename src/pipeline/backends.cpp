// The process-wide backend registry: GPU backends that are compiled in and find a device, then the CPU.
#include "kiln/device.h"

namespace kiln {

BackendRegistry& BackendRegistry::instance() {
  static BackendRegistry* registry = [] {
    auto* r = new BackendRegistry();
    r->add(nullptr, BackendStatus{BackendKind::kCuda, false, "not compiled (GPU backends are not implemented yet)"});
    r->add(nullptr, BackendStatus{BackendKind::kOpenCL, false, "not compiled (GPU backends are not implemented yet)"});
    r->add(cpu_backend_create(), BackendStatus{BackendKind::kCpu, true, "always available"});
    return r;
  }();
  return *registry;
}

}  // namespace kiln
