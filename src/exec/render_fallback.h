// Rendering with reported fallback: a GPU batch that runs out of memory is halved and retried (the largest size
// that worked is remembered for the rest of the job); a kernel or driver error moves that batch and the rest of
// the job to the CPU. Each kind of event is logged once and every event is counted. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "kiln/device.h"

namespace kiln {

class FallbackRenderer {
 public:
  using LogFn = std::function<void(const std::string&)>;

  // `fallback_on_error` false: the first GPU error is returned as is.
  FallbackRenderer(Backend& primary, Backend& cpu, bool fallback_on_error, int64_t batch_limit, LogFn log);

  Status render(const RenderParams& params, const WindowBatch& windows, const BatchView& out);

  bool on_gpu() const { return m_primary.is_gpu() && !m_on_cpu.load(); }
  Backend& primary() const { return m_primary; }
  int64_t fallbacks() const;
  std::vector<std::string> events() const;
  int64_t batch_limit() const { return m_batch_limit.load(); }
  // JSON: backend, whether the job moved to the CPU, events, the GPU batch size that worked.
  std::string report_json() const;

 private:
  void record(const std::string& kind, const std::string& message);

  Backend& m_primary;
  Backend& m_cpu;
  bool m_fallback_on_error;
  std::atomic<int64_t> m_batch_limit;
  std::atomic<bool> m_on_cpu{false};
  LogFn m_log;
  mutable std::mutex m_mutex;
  std::set<std::string> m_seen;
  std::vector<std::string> m_events;
  int64_t m_count = 0;
};

}  // namespace kiln
