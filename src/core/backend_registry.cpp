#include <algorithm>
#include <cctype>

#include "kiln/device.h"

namespace kiln {

const char* backend_kind_name(BackendKind kind) {
  switch (kind) {
    case BackendKind::kCuda: return "cuda";
    case BackendKind::kOpenCL: return "opencl";
    case BackendKind::kCpu: return "cpu";
  }
  return "?";
}

const char* exec_mode_name(ExecMode mode) {
  switch (mode) {
    case ExecMode::kAuto: return "auto";
    case ExecMode::kGpu: return "gpu";
    case ExecMode::kCpu: return "cpu";
  }
  return "?";
}

Result<ExecMode> exec_mode_parse(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (n == "auto") return ExecMode::kAuto;
  if (n == "gpu") return ExecMode::kGpu;
  if (n == "cpu") return ExecMode::kCpu;
  return invalid_argument("unknown mode '" + name + "' (expected auto, gpu or cpu)");
}

const char* op_kind_name(OpKind op) {
  switch (op) {
    case OpKind::kRender: return "render";
  }
  return "?";
}

void BackendRegistry::add(std::unique_ptr<Backend> backend, BackendStatus status) {
  m_statuses.push_back(std::move(status));
  if (!backend) return;
  // Keep CPU last: GPU backends go in front of it, in the order they are added.
  auto cpu = std::find_if(m_backends.begin(), m_backends.end(),
                          [](const auto& b) { return b->kind() == BackendKind::kCpu; });
  if (backend->kind() != BackendKind::kCpu && cpu != m_backends.end()) {
    m_backends.insert(cpu, std::move(backend));
  } else {
    m_backends.push_back(std::move(backend));
  }
}

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

Result<Placement> BackendRegistry::place(ExecMode mode, const OpRequest& request) const {
  const std::string op = op_kind_name(request.op);
  if (mode == ExecMode::kCpu) return Placement{&cpu(), "mode cpu"};
  std::string declined;
  for (const auto& backend : m_backends) {
    if (!backend->is_gpu()) continue;
    if (backend->supports(request)) return Placement{backend.get(), backend->name() + " supports " + op};
    declined += (declined.empty() ? "" : ", ") + backend->name() + " does not support this " + op;
  }
  const std::string why = declined.empty() ? unavailable_gpus(m_statuses) : declined;
  if (mode == ExecMode::kGpu) return Status(Errc::kDeviceError, "--mode gpu: no usable GPU for " + op + " (" + why + ")");
  return Placement{&cpu(), "no GPU (" + why + ")"};
}

}  // namespace kiln
