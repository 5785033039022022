// op_run: validate, place (supports() decides), run, and fall back to the CPU when a GPU fails.
#include "kiln/exec.h"

#include <cstdlib>

#include "core/thread_pool.h"
#include "exec/exec_env.h"
#include "profiler/profiler.h"

namespace kiln {

Status exec_options_apply_env(OpKind op, ExecOptions* exec, std::vector<std::string>* notes) {
  return exec_env_apply(op, &exec->mode, &exec->gpu_only, notes, [](const char* name) { return std::getenv(name); });
}

Status op_run(const OpCall& call, const ExecOptions& exec, ExecReport* report) {
  // Device-space batches can only run where their memory is.
  if (exec.mode == ExecMode::kCpu && (call.in.space == MemorySpace::kDevice || call.out.space == MemorySpace::kDevice)) {
    return invalid_argument(std::string(op_kind_name(call.op)) + ": a device batch cannot run in mode cpu");
  }
  KILN_TRY(op_validate(call));
  if (call.in.count == 0) return Status::ok();
  const BackendRegistry& registry = BackendRegistry::instance();
  OpRequest request;
  request.op = call.op;
  request.call = &call;
  ExecMode mode = exec.mode;
  KILN_TRY_ASSIGN(Placement placement, registry.place(mode, request, exec.gpu_only));
  if (placement.backend->kind() == BackendKind::kCpu &&
      (call.in.space == MemorySpace::kDevice || call.out.space == MemorySpace::kDevice)) {
    return invalid_argument(std::string(op_kind_name(call.op)) + ": no GPU backend accepts this device batch (" +
                            placement.reason + ")");
  }
  if (report != nullptr) {
    report->backend = placement.backend->name();
    report->placement = placement.reason;
    report->fallback.clear();
  }
  Status status;
  {
    KILN_PROFILE_SCOPE(op_kind_name(call.op));
    status = placement.backend->run(call, exec.pool);
  }
  if (status.is_ok() || placement.backend->kind() == BackendKind::kCpu) return status;
  const bool device_failure = status.code() == Errc::kDeviceError || status.code() == Errc::kOutOfMemory;
  const bool host_batches = call.in.space == MemorySpace::kHost && call.out.space == MemorySpace::kHost;
  if (!exec.fallback_on_error || !device_failure || !host_batches || mode == ExecMode::kGpu) return status;
  if (report != nullptr) {
    report->backend = registry.cpu().name();
    report->fallback = placement.backend->name() + ": " + status.message();
  }
  return registry.cpu().run(call, exec.pool);
}

}  // namespace kiln
