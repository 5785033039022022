// Backends, devices and streams. The registry lists backends in priority order; CPU is always last. Which backend
// runs a call is decided in kiln/exec.h (placement, fallback); a backend only answers supports() and runs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/enum_names.h"
#include "kiln/image.h"
#include "kiln/ops.h"
#include "kiln/status.h"

namespace kiln {

class ThreadPool;
struct PoolBlock;
struct PoolStats;

enum class BackendKind : uint8_t { kCuda = 0, kOpenCL, kCpu };
enum class ExecMode : uint8_t { kAuto = 0, kGpu, kCpu };

inline constexpr EnumName<BackendKind> kBackendKindNames[] = {
    {BackendKind::kCuda, "cuda"}, {BackendKind::kOpenCL, "opencl"}, {BackendKind::kCpu, "cpu"}};
inline constexpr EnumName<ExecMode> kExecModeNames[] = {
    {ExecMode::kAuto, "auto"}, {ExecMode::kGpu, "gpu"}, {ExecMode::kCpu, "cpu"}};
inline const char* backend_kind_name(BackendKind kind) { return enum_name(kBackendKindNames, kind); }
inline const char* exec_mode_name(ExecMode mode) { return enum_name(kExecModeNames, mode); }
inline Result<ExecMode> exec_mode_parse(const std::string& name) { return enum_parse(kExecModeNames, name, "mode"); }

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

// Times of one call measured with device events (milliseconds), where a backend measures them.
struct OpTimings {
  double upload_ms = 0;
  double kernel_ms = 0;
  double download_ms = 0;
};

class Backend;

// An in-order queue of work on one backend's device: a CUDA stream, an OpenCL command queue; the CPU's is empty.
// Used by one thread at a time. Calls given the same stream run one after another on the device.
class Stream {
 public:
  virtual ~Stream() = default;
  virtual Backend& backend() const = 0;
  // Waits until everything enqueued on this stream has finished.
  virtual Status synchronize() = 0;
  // The platform's handle (a cudaStream_t), for libraries that run work on it; nullptr where there is none.
  virtual void* native_handle() const { return nullptr; }
};

// What a backend gets besides the call.
struct RunContext {
  ThreadPool* pool = nullptr;     // CPU worker threads (the CPU backend); nullptr = the calling thread
  Stream* stream = nullptr;       // this backend's stream to run on; nullptr = one the backend lends for the call
  OpTimings* timings = nullptr;   // device-measured times of the call, where the backend measures them
};

// A stream of another library that reads a backend's device memory (Backend::foreign_stream_describe).
struct ForeignStream {
  void* native = nullptr;
  bool ordered_with_default = false;  // its work is ordered with CUDA's legacy default stream's
};

// CUDA's calls (and its destruction) run on its device and leave the calling thread's current device current.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  virtual std::string name() const = 0;
  virtual bool is_gpu() const = 0;
  virtual std::vector<DeviceInfo> devices() const = 0;
  // True when this backend runs `call` (parameters and shapes; it must not read pixel memory). Placement asks
  // nothing else.
  virtual bool supports(const OpCall& call) const = 0;
  // Runs a validated call that supports() accepted and returns when its results are in the call's memory.
  // Thread-safe: calls on different streams overlap. OutOfMemory when device buffers cannot be had (the caller may
  // retry a smaller batch), DeviceError for kernel or driver failures.
  virtual Status run(const OpCall& call, const RunContext& ctx) = 0;
  // A stream of this backend for callers that order their own calls (the CPU's does nothing).
  virtual Result<std::unique_ptr<Stream>> stream_create();
  // Host memory this backend transfers into fastest (pinned for CUDA, mapped for OpenCL, plain for the CPU);
  // block.handle is the host pointer. Outputs placed here skip a staging copy.
  virtual Result<PoolBlock> host_acquire(size_t bytes);
  virtual void host_release(PoolBlock block);
  // Device memory from this backend's pool, addressed by pointer (block.handle): what device-space calls
  // (MemorySpace::kDevice) and ONNX Runtime's CUDA provider read and write in place. NotImplemented where device
  // memory has no pointer a library can take (the CPU, OpenCL's cl_mem).
  virtual Result<PoolBlock> device_acquire(size_t bytes);
  virtual void device_release(PoolBlock block);
  // Copies `bytes` at `device` (inside a device_acquire() block) into host memory; returns when they are there.
  virtual Status device_download(const void* device, void* host, size_t bytes);
  // Copies `bytes` of host memory to `device` (inside a device_acquire() block); returns when they are there.
  virtual Status device_upload(const void* host, void* device, size_t bytes);
  // Copies each host image (any strides) into the device image of the same shape (device-space views inside
  // device_acquire() blocks, any strides); returns when they are there. CUDA packs pageable images into its pinned
  // staging slots and queues each image's DMA as soon as it is packed; `host` may also be device images of this
  // backend (a device-to-device copy). NotImplemented where device_acquire is.
  virtual Status images_upload(const VarShapeBatchView& host, const VarShapeBatchView& device);
  // Another library is about to read device memory of this backend on its stream `native` (DLPack's value: 1 for
  // CUDA's legacy default stream, 2 for the per-thread one, else a cudaStream_t valid now): what
  // release_after_foreign_reads() needs later, when that stream may be gone. InvalidArgument for a handle that is no
  // stream of this device; NotImplemented where there are no native streams.
  virtual Result<ForeignStream> foreign_stream_describe(void* native);
  // That library let the memory go: `keep` (what holds the memory) is dropped once its reads are done, before the
  // memory can go back to kiln's pool. Where the stream is ordered with CUDA's legacy default stream (the legacy and
  // per-thread streams, streams made blocking) an event recorded there is polled, and the caller does not wait; a
  // non-blocking stream may be destroyed by now, so the whole device is waited for. The caller's current device is
  // kept. Elsewhere `keep` is dropped at once.
  virtual void release_after_foreign_reads(const ForeignStream& stream, std::shared_ptr<const void> keep);
  // The device buffer pool's counters (zeros for the CPU).
  virtual PoolStats memory_stats() const;
  // The counters of the pool host_acquire() serves from (pinned, mapped or plain host memory).
  virtual PoolStats host_memory_stats() const;
};

struct BackendStatus {
  BackendKind kind = BackendKind::kCpu;
  bool available = false;
  std::string reason;  // why not: "not compiled", "no driver", "no device", ...
};

class BackendRegistry {
 public:
  // The process-wide registry (src/exec/backends.cpp): compiled GPU backends that found a device, then CPU.
  static BackendRegistry& instance();

  const std::vector<std::unique_ptr<Backend>>& backends() const { return m_backends; }
  const std::vector<BackendStatus>& statuses() const { return m_statuses; }
  Backend& cpu() const { return *m_backends.back(); }
  // The backend of `kind`, or nullptr when there is none (not compiled, no device: status() says why).
  Backend* find(BackendKind kind) const;
  // What became of `kind` when the registry started, or nullptr when it was never tried.
  const BackendStatus* status(BackendKind kind) const;

  void add(std::unique_ptr<Backend> backend, BackendStatus status);  // keeps CPU last
  // GPU_DEVICE_ID and GPU_MEMORY_LIMIT_GB as the backends were made with, read once when the registry started: every
  // later user (ONNX Runtime's sessions, NVDEC) takes them from here, so a variable changed afterwards (Python's
  // os.environ) cannot put a stream on one device and its input on another. The variables' error if they were bad.
  Result<BackendOptions> options() const;
  void options_set(Result<BackendOptions> options);

 private:
  std::vector<std::unique_ptr<Backend>> m_backends;
  std::vector<BackendStatus> m_statuses;
  BackendOptions m_options;
  Status m_options_status;
};

std::unique_ptr<Backend> cpu_backend_create();
// GPU backends: a Status explains why one is unavailable (no driver, no device, ...). Defined only when compiled.
Result<std::unique_ptr<Backend>> cuda_backend_create(const BackendOptions& options);
Result<std::unique_ptr<Backend>> opencl_backend_create(const BackendOptions& options);
// GPU_DEVICE_ID and GPU_MEMORY_LIMIT_GB from the environment.
Result<BackendOptions> backend_options_from_env();

}  // namespace kiln
