// Running op calls: placement (mode, GPU_BACKEND, per-op switches, supports()), the backend's run, and the one
// fallback path every device-touching call takes: a GPU batch that runs out of memory is halved and retried (the
// size that worked is kept), a GPU error reruns the rest on the CPU; each kind of event is logged once and all are
// counted and reported.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kiln/device.h"
#include "kiln/ops.h"
#include "kiln/params.h"
#include "kiln/status.h"

namespace kiln {

class ThreadPool;

struct ExecOptions {
  ExecMode mode = ExecMode::kAuto;      // gpu: a GPU or an error (no CPU rerun); cpu: never a GPU
  std::optional<BackendKind> gpu_only{};  // GPU_BACKEND=cuda|opencl
  bool fallback_on_error = true;        // a GPU error reruns the rest of the call (and of the job) on the CPU
  ThreadPool* pool = nullptr;           // CPU worker threads; nullptr = the calling thread only
  Stream* stream = nullptr;             // run on this stream, so on its backend; nullptr = placement decides
  int64_t gpu_batch_limit = 0;          // at most this many images per GPU run (0 = the whole call)
};

// What happened to one call.
struct ExecReport {
  std::string backend;    // "cpu", "opencl", "cuda": who ran it (the CPU after a fallback)
  std::string placement;  // why the first backend was chosen
  std::string fallback;   // non-empty when a GPU failed and the CPU reran the call: the GPU's error
};

struct Placement {
  Backend* backend = nullptr;
  std::string reason;  // logged: why this backend runs the call
};

// auto: the first GPU backend that supports the call (restricted to `only`), else the CPU; gpu: that GPU or
// DeviceError with the reasons; cpu: the CPU. InvalidArgument when the CPU is chosen for a call it cannot run
// (device batches).
Result<Placement> placement_choose(const BackendRegistry& registry, ExecMode mode, const OpCall& call,
                                   std::optional<BackendKind> only = std::nullopt);

using LogFn = std::function<void(const std::string&)>;

// Runs op calls with one set of options and keeps what their fallbacks taught across calls: the GPU batch size
// that fits, and whether the GPU failed (later calls then go straight to the CPU). A job holds one executor for all
// its calls; op_run() is an executor for a single call. Thread-safe; with ExecOptions::stream its calls run one at a
// time, since a stream is used by one thread at a time.
class OpExecutor {
 public:
  // `log` receives the first message of each kind of fallback event; `registry` defaults to the process's.
  explicit OpExecutor(ExecOptions options = {}, LogFn log = {}, const BackendRegistry* registry = nullptr);
  OpExecutor(const OpExecutor&) = delete;
  OpExecutor& operator=(const OpExecutor&) = delete;

  // Validates the call (InvalidArgument before any backend sees it), places it and runs it, halving GPU batches
  // that run out of memory and rerunning on the CPU after a GPU error (fallback_on_error, not in mode gpu).
  Status run(const OpCall& call, ExecReport* report = nullptr);
  // Where `call` would run now (nothing is validated or run); the first placement names the job's backend.
  Result<Placement> place(const OpCall& call);
  // run() for a call on `device`'s memory (its device batches, left where they are): NotImplemented, with the
  // placement's reason, where the call would be placed on another backend (a placement that fails comes back as
  // its error).
  Status run_on(Backend& device, const OpCall& call, ExecReport* report = nullptr);

  const ExecOptions& options() const { return m_options; }
  bool moved_to_cpu() const { return m_on_cpu.load(); }
  int64_t gpu_batch_limit() const { return m_batch_limit.load(); }
  int64_t fallbacks() const;                // every event, counted
  std::vector<std::string> events() const;  // each kind of event once, with its reason
  // {"backend", "device", "moved_to_cpu", "fallbacks", "events", "gpu_batch_size" (GPU backends)}: the first
  // placement's backend and what happened since.
  std::string report_json() const;

 private:
  Status run_on_gpu(Backend& gpu, const OpCall& call, int64_t* done);
  void record(const std::string& kind, const std::string& message);

  ExecOptions m_options;
  LogFn m_log;
  const BackendRegistry& m_registry;
  std::atomic<int64_t> m_batch_limit;
  std::atomic<bool> m_on_cpu{false};
  std::mutex m_stream_mutex;   // held through each run when m_options.stream is set
  mutable std::mutex m_mutex;  // guards what follows
  Backend* m_primary = nullptr;
  std::set<std::string> m_seen;
  std::vector<std::string> m_events;
  int64_t m_count = 0;
};

// One call through a fresh executor.
Status op_run(const OpCall& call, const ExecOptions& exec = {}, ExecReport* report = nullptr);

// What users set about execution, the same settings in every job (declared once: exec_params()).
struct ExecSettings {
  ExecMode mode = ExecMode::kAuto;
  int32_t threads = 0;            // CPU worker threads, 0 = all cores
  int64_t batch_size = 64;        // images per batch (and at most per GPU launch)
  bool fallback_on_error = true;  // a GPU error reruns the rest on the CPU
  std::optional<BackendKind> gpu_only{};  // GPU_BACKEND=cuda|opencl (environment only)
};

// mode, threads (KILN_THREADS), batch_size (GPU_BATCH_SIZE), fallback_on_error.
const ParamTable<ExecSettings>& exec_params();

using EnvLookup = std::function<const char*(const char*)>;
const char* env_lookup_process(const char* name);  // std::getenv

// The environment for a job that runs `op`: KILN_THREADS and GPU_BATCH_SIZE, then GPU_BACKEND, ALL_GPU and the
// op's own switch (see exec_options_apply_env). `notes` receives messages to show the user.
Status exec_settings_apply_env(ExecSettings* settings, OpKind op, const EnvLookup& lookup,
                               std::vector<std::string>* notes = nullptr);
// The same for a job whose stages have their own switches (then see exec_mode_apply_env): no op switch.
Status exec_settings_apply_env(ExecSettings* settings, const EnvLookup& lookup,
                               std::vector<std::string>* notes = nullptr);

// The environment for one stage of an application that has its own switch (FACE_DETECTION_GPU, ...): GPU_BACKEND
// cpu, ALL_GPU and `gpu_switch` (it wins over ALL_GPU) refine `mode` as they do for an op.
Status exec_mode_apply_env(const char* gpu_switch, ExecMode* mode, const EnvLookup& lookup,
                           std::vector<std::string>* notes = nullptr);

// The options of a job's executor: its settings, `pool` for the CPU, GPU launches of at most batch_size images.
ExecOptions exec_options_make(const ExecSettings& settings, ThreadPool* pool);

// Applies the environment to `exec` for `op`: GPU_BACKEND (cpu|auto|cuda|opencl|rocm|mps), then ALL_GPU and the
// op's own switch (op_gpu_switch_name; it wins over ALL_GPU): false keeps the op on the CPU, true lets it use a GPU.
// `notes` receives messages such as "GPU_BACKEND=rocm: ... using OpenCL". InvalidArgument on unparsable values.
Status exec_options_apply_env(OpKind op, ExecOptions* exec, std::vector<std::string>* notes = nullptr);

}  // namespace kiln
