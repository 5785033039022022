#include "exec/render_fallback.h"

#include <nlohmann/json.hpp>

namespace kiln {

namespace {

WindowBatch window_slice(const WindowBatch& windows, int64_t first, int64_t count) {
  WindowBatch slice = windows;
  slice.starts = windows.starts + first;
  slice.count = count;
  return slice;
}

BatchView batch_slice(const BatchView& out, int64_t first, int64_t count) {
  BatchView slice = out;
  slice.data = static_cast<uint8_t*>(out.data) + first * out.image_stride;
  slice.count = count;
  return slice;
}

}  // namespace

FallbackRenderer::FallbackRenderer(Backend& primary, Backend& cpu, bool fallback_on_error, int64_t batch_limit,
                                   LogFn log)
    : m_primary(primary),
      m_cpu(cpu),
      m_fallback_on_error(fallback_on_error),
      m_batch_limit(std::max<int64_t>(1, batch_limit)),
      m_log(std::move(log)) {}

void FallbackRenderer::record(const std::string& kind, const std::string& message) {
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    ++m_count;
    first = m_seen.insert(kind).second;
    if (first) m_events.push_back(message);
  }
  if (first && m_log) m_log(message);
}

Status FallbackRenderer::render(const RenderParams& params, const WindowBatch& windows, const BatchView& out) {
  int64_t done = 0;
  while (done < windows.count && on_gpu()) {
    const int64_t chunk = std::min(windows.count - done, m_batch_limit.load());
    const Status status = m_primary.render(params, window_slice(windows, done, chunk), batch_slice(out, done, chunk), nullptr);
    if (status.is_ok()) {
      done += chunk;
      continue;
    }
    if (!m_fallback_on_error) return status;
    if (status.code() == Errc::kOutOfMemory && chunk > 1) {
      const int64_t half = chunk / 2;
      int64_t limit = m_batch_limit.load();
      while (half < limit && !m_batch_limit.compare_exchange_weak(limit, half)) {
      }
      record("oom:" + std::to_string(half), m_primary.name() + " ran out of memory on a batch of " +
                                                std::to_string(chunk) + " images; retrying with batches of " +
                                                std::to_string(half) + " (" + status.message() + ")");
      continue;
    }
    m_on_cpu = true;
    record("device", m_primary.name() + " failed (" + status.message() + "); rendering this batch and the rest of the job on the CPU");
  }
  if (done == windows.count) return Status::ok();
  return m_cpu.render(params, window_slice(windows, done, windows.count - done),
                      batch_slice(out, done, windows.count - done), nullptr);
}

int64_t FallbackRenderer::fallbacks() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_count;
}

std::vector<std::string> FallbackRenderer::events() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_events;
}

std::string FallbackRenderer::report_json() const {
  nlohmann::json j;
  j["backend"] = m_primary.name();
  const auto devices = m_primary.devices();
  if (!devices.empty()) j["device"] = devices.front().name;
  j["moved_to_cpu"] = m_on_cpu.load();
  j["fallbacks"] = fallbacks();
  j["events"] = events();
  if (m_primary.is_gpu()) j["gpu_batch_size"] = m_batch_limit.load();
  return j.dump();
}

}  // namespace kiln
