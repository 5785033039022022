#include <algorithm>
#include <cctype>

#include <cstdlib>
#include <cstring>

#include "core/buffer_pool.h"
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
    case OpKind::kResize: return "resize";
    case OpKind::kColor: return "color";
    case OpKind::kPreprocess: return "preprocess";
    case OpKind::kNormalize: return "normalize";
    case OpKind::kQuality: return "quality";
    case OpKind::kEnhance: return "enhance";
    case OpKind::kWarp: return "warp";
    case OpKind::kMask: return "mask";
  }
  return "?";
}

const char* op_gpu_switch_name(OpKind op) {
  switch (op) {
    case OpKind::kRender: return "RENDER_GPU";
    case OpKind::kEnhance: return "IMAGE_ENHANCEMENT_GPU";
    case OpKind::kQuality: return "QUALITY_CHECKS_GPU";
    default: return "IMAGE_PROCESSING_GPU";
  }
}

Status Backend::run(const OpCall& call, ThreadPool* /*pool*/) {
  return Status(Errc::kNotImplemented, name() + " does not run " + op_kind_name(call.op));
}

Result<PoolBlock> Backend::host_acquire(size_t bytes) {
  void* memory = std::malloc(bytes);
  if (memory == nullptr) return Status(Errc::kOutOfMemory, "host allocation of " + std::to_string(bytes) + " bytes failed");
  return PoolBlock{reinterpret_cast<uintptr_t>(memory), bytes};
}

void Backend::host_release(PoolBlock block) { std::free(reinterpret_cast<void*>(block.handle)); }

PoolStats Backend::memory_stats() const { return {}; }

Result<BackendOptions> backend_options_from_env() {
  BackendOptions options;
  if (const char* id = std::getenv("GPU_DEVICE_ID"); id != nullptr && *id != '\0') {
    char* end = nullptr;
    const long value = std::strtol(id, &end, 10);
    if (*end != '\0' || value < 0) return invalid_argument("GPU_DEVICE_ID='" + std::string(id) + "': expected a device index");
    options.device_id = static_cast<int32_t>(value);
  }
  if (const char* gb = std::getenv("GPU_MEMORY_LIMIT_GB"); gb != nullptr && *gb != '\0') {
    char* end = nullptr;
    const double value = std::strtod(gb, &end);
    if (*end != '\0' || !(value > 0)) {
      return invalid_argument("GPU_MEMORY_LIMIT_GB='" + std::string(gb) + "': expected a positive number");
    }
    options.memory_limit_bytes = static_cast<uint64_t>(value * 1024.0 * 1024.0 * 1024.0);
  }
  const char* types = std::getenv("KILN_OPENCL_DEVICE_TYPE");
  const char* preferred = std::getenv("GPU_BACKEND");
  options.opencl_allow_cpu_devices = (types != nullptr && (std::strcmp(types, "all") == 0 || std::strcmp(types, "cpu") == 0)) ||
                                     (preferred != nullptr && std::strcmp(preferred, "opencl") == 0);
  return options;
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

Result<Placement> BackendRegistry::place(ExecMode mode, const OpRequest& request,
                                         std::optional<BackendKind> only) const {
  const std::string op = op_kind_name(request.op);
  if (mode == ExecMode::kCpu) return Placement{&cpu(), "mode cpu"};
  std::string declined;
  for (const auto& backend : m_backends) {
    if (!backend->is_gpu() || (only && backend->kind() != *only)) continue;
    if (backend->supports(request)) return Placement{backend.get(), backend->name() + " supports " + op};
    declined += (declined.empty() ? "" : ", ") + backend->name() + " does not support this " + op;
  }
  const std::string why = declined.empty() ? unavailable_gpus(m_statuses) : declined;
  if (mode == ExecMode::kGpu) return Status(Errc::kDeviceError, "--mode gpu: no usable GPU for " + op + " (" + why + ")");
  return Placement{&cpu(), "no GPU (" + why + ")"};
}

}  // namespace kiln
