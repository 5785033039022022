// The one place-run-fall-back path: validate, place, run (GPU batches halved on out-of-memory), rerun the rest on
// the CPU after a GPU error, record what happened.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include <nlohmann/json.hpp>

#include "exec/exec_env.h"
#include "kiln/exec.h"
#include "profiler/profiler.h"

namespace kiln {

namespace {

constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

bool host_batches(const OpCall& call) {
  return call.in.space == MemorySpace::kHost && call.out.space == MemorySpace::kHost;
}

bool device_failure(const Status& status) {
  return status.code() == Errc::kDeviceError || status.code() == Errc::kOutOfMemory;
}

}  // namespace

OpExecutor::OpExecutor(ExecOptions options, LogFn log, const BackendRegistry* registry)
    : m_options(options),
      m_log(std::move(log)),
      m_registry(registry != nullptr ? *registry : BackendRegistry::instance()),
      m_batch_limit(options.gpu_batch_limit > 0 ? options.gpu_batch_limit : kNoLimit) {}

Result<Placement> OpExecutor::place(const OpCall& call) {
  Placement placement;
  if (m_options.stream != nullptr) {
    Backend& backend = m_options.stream->backend();
    if (m_options.mode == ExecMode::kCpu && backend.is_gpu()) {
      return invalid_argument(std::string(op_kind_name(call.op)) + ": a " + backend.name() +
                              " stream cannot run in mode cpu");
    }
    if (!backend.supports(call)) {
      return invalid_argument(std::string(op_kind_name(call.op)) + ": the call's stream is on " + backend.name() +
                              ", which does not support this call");
    }
    placement = Placement{&backend, "the call's stream is on " + backend.name()};
  } else if (m_on_cpu.load() && m_registry.cpu().supports(call)) {
    placement = Placement{&m_registry.cpu(), "moved to the CPU after a GPU error"};
  } else {
    KILN_TRY_ASSIGN(placement, placement_choose(m_registry, m_options.mode, call, m_options.gpu_only));
  }
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_primary == nullptr) m_primary = placement.backend;
  return placement;
}

Status OpExecutor::run_on(Backend& device, const OpCall& call, ExecReport* report) {
  KILN_TRY(op_validate(call));  // placement reads the call's parameters
  KILN_TRY_ASSIGN(const Placement placement, place(call));
  if (placement.backend != &device) {
    return Status(Errc::kNotImplemented, std::string(op_kind_name(call.op)) + " is placed on " +
                                             placement.backend->name() + " (" + placement.reason + "), not on " +
                                             device.name());
  }
  return run(call, report);
}

Status OpExecutor::run(const OpCall& call, ExecReport* report) {
  KILN_TRY(op_validate(call));
  if (call.in.count == 0) return Status::ok();
  std::unique_lock<std::mutex> stream_lock(m_stream_mutex, std::defer_lock);
  if (m_options.stream != nullptr) stream_lock.lock();
  KILN_TRY_ASSIGN(const Placement placement, place(call));
  Backend& backend = *placement.backend;
  if (report != nullptr) {
    report->backend = backend.name();
    report->placement = placement.reason;
    report->fallback.clear();
  }
  KILN_PROFILE_SCOPE(op_kind_name(call.op));
  const RunContext context{m_options.pool, m_options.stream, nullptr};
  if (!backend.is_gpu()) return backend.run(call, context);

  int64_t done = 0;
  const Status status = run_on_gpu(backend, call, &done);
  if (!status.is_ok()) {
    const bool may_fall_back = m_options.fallback_on_error && m_options.mode != ExecMode::kGpu &&
                               m_options.stream == nullptr && host_batches(call) && device_failure(status);
    if (!may_fall_back) return status;
    m_on_cpu = true;
    record("device", backend.name() + " failed (" + status.message() +
                         "); this batch and the rest of the job run on the CPU");
    if (report != nullptr) report->fallback = backend.name() + ": " + status.message();
  }
  if (done == call.in.count) return Status::ok();
  if (!host_batches(call)) return Status(Errc::kDeviceError, "the job moved to the CPU, which cannot run device batches");
  if (report != nullptr) report->backend = m_registry.cpu().name();
  const OpCallSlice rest = op_call_slice(call, done, call.in.count - done);
  return m_registry.cpu().run(rest.call, RunContext{m_options.pool, nullptr, nullptr});
}

// Runs images [*done, count) on `gpu` in batches of at most the limit, halving it when a batch runs out of memory.
// Returns the first error it does not handle; stops early (OK) when another call moved the job to the CPU and the
// CPU can take the rest (host batches).
Status OpExecutor::run_on_gpu(Backend& gpu, const OpCall& call, int64_t* done) {
  const int64_t count = call.in.count;
  const RunContext context{nullptr, m_options.stream, nullptr};
  const bool cpu_can_finish = host_batches(call);
  while (*done < count && !(cpu_can_finish && m_on_cpu.load())) {
    const int64_t chunk = std::min(count - *done, m_batch_limit.load());
    const OpCallSlice slice = op_call_slice(call, *done, chunk);
    const Status status = gpu.run(slice.call, context);
    if (status.is_ok()) {
      *done += chunk;
      continue;
    }
    if (!m_options.fallback_on_error || status.code() != Errc::kOutOfMemory || chunk == 1) return status;
    const int64_t half = chunk / 2;
    int64_t limit = m_batch_limit.load();
    while (half < limit && !m_batch_limit.compare_exchange_weak(limit, half)) {
    }
    record("oom:" + std::to_string(half), gpu.name() + " ran out of memory on a batch of " + std::to_string(chunk) +
                                              " images; retrying with batches of " + std::to_string(half) + " (" +
                                              status.message() + ")");
  }
  return Status::ok();
}

void OpExecutor::record(const std::string& kind, const std::string& message) {
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    ++m_count;
    first = m_seen.insert(kind).second;
    if (first) m_events.push_back(message);
  }
  if (first && m_log) m_log(message);
}

int64_t OpExecutor::fallbacks() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_count;
}

std::vector<std::string> OpExecutor::events() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_events;
}

std::string OpExecutor::report_json() const {
  Backend* primary = nullptr;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    primary = m_primary;
  }
  if (primary == nullptr) primary = &m_registry.cpu();
  nlohmann::json j;
  j["backend"] = primary->name();
  const auto devices = primary->devices();
  if (!devices.empty()) j["device"] = devices.front().name;
  j["moved_to_cpu"] = m_on_cpu.load();
  j["fallbacks"] = fallbacks();
  j["events"] = events();
  if (primary->is_gpu() && m_batch_limit.load() != kNoLimit) j["gpu_batch_size"] = m_batch_limit.load();
  return j.dump();
}

Status op_run(const OpCall& call, const ExecOptions& exec, ExecReport* report) {
  OpExecutor executor(exec);
  return executor.run(call, report);
}

Status exec_options_apply_env(OpKind op, ExecOptions* exec, std::vector<std::string>* notes) {
  return exec_env_apply(op, &exec->mode, &exec->gpu_only, notes, env_lookup_process);
}

}  // namespace kiln
