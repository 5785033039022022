// The CPU backend: always compiled, always registered, always last.
#include <fstream>
#include <string>
#include <thread>

#include <unistd.h>

#include "kiln/device.h"
#include "core/cpu_isa.h"
#include "ops/cpu/cpu_ops.h"

namespace kiln {

namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "CPU";
}

class CpuBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::kCpu; }
  std::string name() const override { return "cpu"; }
  bool is_gpu() const override { return false; }

  std::vector<DeviceInfo> devices() const override {
    DeviceInfo info;
    info.name = cpu_model_name();
    info.vendor = "host";
    info.version = cpu_isa_name(cpu_isa_active());
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long available = ::sysconf(_SC_AVPHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGE_SIZE);
    info.total_memory = static_cast<int64_t>(pages) * page_size;
    info.free_memory = static_cast<int64_t>(available) * page_size;
    info.compute_units = static_cast<int32_t>(std::thread::hardware_concurrency());
    return {info};
  }

  // Every family on host batches: the CPU implementations are the references.
  bool supports(const OpCall& call) const override {
    return cpu_op_find(call.op) != nullptr && call.in.space == MemorySpace::kHost &&
           call.out.space == MemorySpace::kHost;
  }

  Status run(const OpCall& call, const RunContext& ctx) override {
    const CpuOp* op = cpu_op_find(call.op);
    if (op == nullptr) return Status(Errc::kNotImplemented, std::string("cpu: no ") + op_kind_name(call.op) + " op");
    return op->run(call, ctx.pool);
  }
};

}  // namespace

std::unique_ptr<Backend> cpu_backend_create() { return std::make_unique<CpuBackend>(); }

}  // namespace kiln
