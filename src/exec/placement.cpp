// Placement: supports() alone decides; GPU backends in registry order, the CPU last.
#include <string>

#include "kiln/exec.h"

namespace kiln {

namespace {

std::string unavailable_gpus(const std::vector<BackendStatus>& statuses) {
  std::string text;
  for (const auto& s : statuses) {
    if (s.kind == BackendKind::kCpu || s.available) continue;
    if (!text.empty()) text += "; ";
    text += std::string(backend_kind_name(s.kind)) + ": " + s.reason;
  }
  return text.empty() ? "no GPU backend is compiled in" : text;
}

}  // namespace

Result<Placement> placement_choose(const BackendRegistry& registry, ExecMode mode, const OpCall& call,
                                   std::optional<BackendKind> only) {
  const std::string op = op_kind_name(call.op);
  Backend& cpu = registry.cpu();
  if (mode == ExecMode::kCpu) {
    if (!cpu.supports(call)) return invalid_argument(op + ": a device batch cannot run in mode cpu");
    return Placement{&cpu, "mode cpu"};
  }
  std::string declined;
  for (const auto& backend : registry.backends()) {
    if (!backend->is_gpu() || (only && backend->kind() != *only)) continue;
    if (backend->supports(call)) return Placement{backend.get(), backend->name() + " supports " + op};
    declined += (declined.empty() ? "" : ", ") + backend->name() + " does not support this " + op;
  }
  const std::string why = declined.empty() ? unavailable_gpus(registry.statuses()) : declined;
  if (mode == ExecMode::kGpu) return Status(Errc::kDeviceError, "--mode gpu: no usable GPU for " + op + " (" + why + ")");
  if (!cpu.supports(call)) return invalid_argument(op + ": no GPU backend accepts this device batch (" + why + ")");
  return Placement{&cpu, "no GPU (" + why + ")"};
}

}  // namespace kiln
