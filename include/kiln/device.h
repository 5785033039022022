// Backends, devices and placement. The registry lists backends in priority order; CPU is always last.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/image.h"
#include "kiln/ops.h"
#include "kiln/status.h"

namespace kiln {

class ThreadPool;

enum class BackendKind : uint8_t { kCuda = 0, kOpenCL, kCpu };
enum class ExecMode : uint8_t { kAuto = 0, kGpu, kCpu };
enum class OpKind : uint8_t { kRender = 0 };

const char* backend_kind_name(BackendKind kind);
const char* exec_mode_name(ExecMode mode);
Result<ExecMode> exec_mode_parse(const std::string& name);  // auto|gpu|cpu
const char* op_kind_name(OpKind op);                         // "render" (env switch RENDER_GPU)

struct DeviceInfo {
  std::string name;
  std::string vendor;
  std::string version;  // compute capability / OpenCL version / ISA
  int64_t total_memory = 0;
  int64_t free_memory = 0;
  int32_t compute_units = 0;
};

// What an op asks of a backend; supports() answers from this alone.
struct OpRequest {
  OpKind op = OpKind::kRender;
  const RenderParams* render = nullptr;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  virtual std::string name() const = 0;
  virtual bool is_gpu() const = 0;
  virtual std::vector<DeviceInfo> devices() const = 0;
  virtual bool supports(const OpRequest& request) const = 0;
  // Renders every window of the batch into `out`. `pool` may spread the batch over threads (CPU only).
  virtual Status render(const RenderParams& params, const WindowBatch& windows, const BatchView& out,
                        ThreadPool* pool) = 0;
};

struct BackendStatus {
  BackendKind kind = BackendKind::kCpu;
  bool available = false;
  std::string reason;  // why not: "not compiled", "no driver", "no device", ...
};

struct Placement {
  Backend* backend = nullptr;
  std::string reason;  // logged: why this backend renders
};

class BackendRegistry {
 public:
  // The process-wide registry: compiled GPU backends that found a device, then CPU.
  static BackendRegistry& instance();

  const std::vector<std::unique_ptr<Backend>>& backends() const { return m_backends; }
  const std::vector<BackendStatus>& statuses() const { return m_statuses; }
  Backend& cpu() const { return *m_backends.back(); }
  // auto: first backend that supports the request (GPU before CPU); gpu: first GPU backend that supports it,
  // else InvalidArgument/DeviceError with the reason; cpu: the CPU backend.
  Result<Placement> place(ExecMode mode, const OpRequest& request) const;

  void add(std::unique_ptr<Backend> backend, BackendStatus status);  // keeps CPU last

 private:
  std::vector<std::unique_ptr<Backend>> m_backends;
  std::vector<BackendStatus> m_statuses;
};

std::unique_ptr<Backend> cpu_backend_create();

}  // namespace kiln
