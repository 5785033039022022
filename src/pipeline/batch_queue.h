// Ordered hand-off from render workers to the single writer, and the first error of a job.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>

#include "io/image_sink.h"
#include "kiln/status.h"

namespace kiln {

// Ordered hand-off from the workers to the writer, bounded so memory stays flat.
class BatchQueue {
 public:
  BatchQueue(int64_t first_batch, int64_t window) : m_next_write(first_batch), m_window(window) {}

  // Blocks while `batch` is too far ahead of the writer. False if the job was stopped.
  bool wait_slot(int64_t batch) {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, [&] { return m_stopped || batch < m_next_write + m_window; });
    return !m_stopped;
  }
  void put(int64_t batch, EncodedBatch&& encoded) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_ready.emplace(batch, std::move(encoded));
    }
    m_cv.notify_all();
  }
  // Next batch in order, or false when stopped.
  bool take(EncodedBatch* out) {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, [&] { return m_stopped || m_ready.count(m_next_write) > 0; });
    if (m_stopped) return false;
    auto it = m_ready.find(m_next_write);
    *out = std::move(it->second);
    m_ready.erase(it);
    ++m_next_write;
    m_cv.notify_all();
    return true;
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_stopped = true;
    }
    m_cv.notify_all();
  }

 private:
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::map<int64_t, EncodedBatch> m_ready;
  int64_t m_next_write;
  int64_t m_window;
  bool m_stopped = false;
};

class FirstError {
 public:
  void set(Status status) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_status.is_ok()) m_status = std::move(status);
  }
  Status get() {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_status;
  }

 private:
  std::mutex m_mutex;
  Status m_status;
};

}  // namespace kiln
