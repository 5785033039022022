// Backends, devices and placement. The registry lists backends in priority order; CPU is always last.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/image.h"
#include "kiln/ops.h"
#include "kiln/status.h"

namespace kiln {

class ThreadPool;
struct PoolBlock;
struct PoolStats;

enum class BackendKind : uint8_t { kCuda = 0, kOpenCL, kCpu };
enum class ExecMode : uint8_t { kAuto = 0, kGpu, kCpu };

const char* backend_kind_name(BackendKind kind);
const char* exec_mode_name(ExecMode mode);
Result<ExecMode> exec_mode_parse(const std::string& name);  // auto|gpu|cpu
const char* op_kind_name(OpKind op);                         // "render", "resize", ...
// The predecessor's per-operation switch that governs `op`: RENDER_GPU, IMAGE_PROCESSING_GPU (resize, color,
// preprocess, normalize, warp, mask), IMAGE_ENHANCEMENT_GPU (enhance), QUALITY_CHECKS_GPU (quality).
const char* op_gpu_switch_name(OpKind op);

struct DeviceInfo {
  std::string name;
  std::string vendor;
  std::string version;  // compute capability / OpenCL version / ISA
  int64_t total_memory = 0;
  int64_t free_memory = 0;
  int32_t compute_units = 0;
  int64_t pool_bytes = 0;  // what kiln's device buffer pool holds on it now
};

// Set once when the registry is built (GPU_DEVICE_ID, GPU_MEMORY_LIMIT_GB).
struct BackendOptions {
  int32_t device_id = 0;
  uint64_t memory_limit_bytes = 0;  // 0 = no limit; the device pool never holds more
  // OpenCL devices of type CPU (e.g. PoCL) are slower than kiln's own CPU path, so they are used only when asked
  // for: KILN_OPENCL_DEVICE_TYPE=all|cpu, or GPU_BACKEND=opencl.
  bool opencl_allow_cpu_devices = false;
};

// Per-call timings a backend may report (milliseconds, measured with device events where there are any).
struct RenderTimings {
  double upload_ms = 0;
  double kernel_ms = 0;
  double download_ms = 0;
};

// What an op asks of a backend; supports() answers from this alone.
struct OpRequest {
  OpKind op = OpKind::kRender;
  const RenderParams* render = nullptr;  // kRender
  const OpCall* call = nullptr;          // image ops (validated)
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
  // Thread-safe: GPU backends keep one stream/queue per calling thread, so calls from several threads overlap.
  // Errors: OutOfMemory when device buffers cannot be had (the caller may retry with a smaller batch),
  // DeviceError for kernel or driver failures.
  virtual Status render(const RenderParams& params, const WindowBatch& windows, const BatchView& out,
                        ThreadPool* pool, RenderTimings* timings = nullptr) = 0;
  // Runs one validated image-op call that supports() accepted. `pool` may spread it over threads (CPU only).
  // Thread-safe like render(). The default is NotImplemented.
  virtual Status run(const OpCall& call, ThreadPool* pool);
  // Host memory this backend transfers into fastest (pinned for CUDA, mapped for OpenCL, plain for the CPU);
  // block.handle is the host pointer. Render outputs placed here skip a staging copy.
  virtual Result<PoolBlock> host_acquire(size_t bytes);
  virtual void host_release(PoolBlock block);
  // The device buffer pool's counters (zeros for the CPU).
  virtual PoolStats memory_stats() const;
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
  // `only` restricts the GPU backends considered (GPU_BACKEND=cuda|opencl).
  Result<Placement> place(ExecMode mode, const OpRequest& request,
                          std::optional<BackendKind> only = std::nullopt) const;

  void add(std::unique_ptr<Backend> backend, BackendStatus status);  // keeps CPU last

 private:
  std::vector<std::unique_ptr<Backend>> m_backends;
  std::vector<BackendStatus> m_statuses;
};

std::unique_ptr<Backend> cpu_backend_create();
// GPU backends: a Status explains why one is unavailable (no driver, no device, ...). Defined only when compiled.
Result<std::unique_ptr<Backend>> cuda_backend_create(const BackendOptions& options);
Result<std::unique_ptr<Backend>> opencl_backend_create(const BackendOptions& options);
// GPU_DEVICE_ID and GPU_MEMORY_LIMIT_GB from the environment.
Result<BackendOptions> backend_options_from_env();

}  // namespace kiln
