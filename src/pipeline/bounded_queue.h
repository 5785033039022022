// MPMC bounded blocking queue: the link between two pipeline stages.
//
// push blocks while the queue is full (backpressure) until it is down to half, pop blocks while it is
// empty. close() ends the stream: pushes fail at once, pops drain what is left and then fail. cancel() wakes every waiter and
// makes push and pop fail at once, dropping what is queued. The queue reports its high-water mark and
// the total time producers and consumers spent blocked.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <utility>

#include "profiler/profiler.h"

namespace kiln {

struct BoundedQueueStats {
  int64_t capacity = 0;
  int64_t high_water = 0;    // most items ever queued at once (<= capacity)
  int64_t pushed = 0;
  int64_t popped = 0;
  int64_t push_wait_ns = 0;  // summed over all producers: time blocked on a full queue
  int64_t pop_wait_ns = 0;   // summed over all consumers: time blocked on an empty queue
};

template <typename T>
class BoundedQueue {
 public:
  using Clock = std::chrono::steady_clock;

  // capacity < 1 is taken as 1.
  explicit BoundedQueue(size_t capacity) : m_capacity(capacity < 1 ? 1 : capacity) {}
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  // Blocks while full. False (item not queued) once the queue is closed or cancelled.
  // `waited_ns`, if given, receives the time this call spent blocked.
  bool push(T item, int64_t* waited_ns = nullptr) {
    std::unique_lock<std::mutex> lock(m_mutex);
    int64_t waited = 0;
    if (!m_closed && !m_cancelled && m_items.size() >= m_capacity) {
      const auto start = Clock::now();
      ++m_push_waiters;
      m_not_full.wait(lock, [&] { return m_closed || m_cancelled || m_items.size() < m_capacity; });
      --m_push_waiters;
      waited = elapsed_ns(start);
      m_stats.push_wait_ns += waited;
    }
    if (waited_ns) *waited_ns = waited;
    if (m_closed || m_cancelled) return false;
    m_items.push_back(std::move(item));
    ++m_stats.pushed;
    const auto size = static_cast<int64_t>(m_items.size());
    if (size > m_stats.high_water) m_stats.high_water = size;
    const bool wake = m_pop_waiters > 0;
    lock.unlock();
    if (m_depth_counter != nullptr) profile_counter(m_depth_counter, static_cast<double>(size));
    if (wake) m_not_empty.notify_one();
    return true;
  }

  // Non-blocking push: false if full, closed or cancelled.
  bool try_push(T& item) {
    std::unique_lock<std::mutex> lock(m_mutex);
    if (m_closed || m_cancelled || m_items.size() >= m_capacity) return false;
    m_items.push_back(std::move(item));
    ++m_stats.pushed;
    const auto size = static_cast<int64_t>(m_items.size());
    if (size > m_stats.high_water) m_stats.high_water = size;
    const bool wake = m_pop_waiters > 0;
    lock.unlock();
    if (wake) m_not_empty.notify_one();
    return true;
  }

  // Blocks while empty. False when cancelled, or closed and drained.
  bool pop(T* out, int64_t* waited_ns = nullptr) {
    std::unique_lock<std::mutex> lock(m_mutex);
    int64_t waited = 0;
    if (!m_closed && !m_cancelled && m_items.empty()) {
      const auto start = Clock::now();
      ++m_pop_waiters;
      m_not_empty.wait(lock, [&] { return m_closed || m_cancelled || !m_items.empty(); });
      --m_pop_waiters;
      waited = elapsed_ns(start);
      m_stats.pop_wait_ns += waited;
    }
    if (waited_ns) *waited_ns = waited;
    if (m_cancelled || m_items.empty()) return false;
    take_front(out, lock);
    return true;
  }

  // Non-blocking pop: false if empty or cancelled.
  bool try_pop(T* out) {
    std::unique_lock<std::mutex> lock(m_mutex);
    if (m_cancelled || m_items.empty()) return false;
    take_front(out, lock);
    return true;
  }

  // No more pushes; consumers drain what is queued. Idempotent.
  void close() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_closed = true;
    }
    m_not_full.notify_all();
    m_not_empty.notify_all();
  }

  // Wakes every waiter; push and pop fail from now on and queued items are dropped. Idempotent.
  void cancel() {
    std::deque<T> dropped;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_cancelled = true;
      dropped.swap(m_items);
    }
    m_not_full.notify_all();
    m_not_empty.notify_all();
  }

  size_t capacity() const { return m_capacity; }
  // Report the queue's depth as a profiler counter under this name (a stable string, see profile_intern).
  void set_depth_counter(const char* name) { m_depth_counter = name; }
  size_t size() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_items.size();
  }
  bool closed() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_closed;
  }
  bool cancelled() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_cancelled;
  }
  BoundedQueueStats stats() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    BoundedQueueStats s = m_stats;
    s.capacity = static_cast<int64_t>(m_capacity);
    return s;
  }

 private:
  static int64_t elapsed_ns(Clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  }

  void take_front(T* out, std::unique_lock<std::mutex>& lock) {
    *out = std::move(m_items.front());
    m_items.pop_front();
    ++m_stats.popped;
    // Blocked producers are woken in a group once the queue is down to half (hysteresis): one wake-up
    // per capacity/2 items instead of one per item, so the consumer (the bottleneck when the queue
    // is full) is not slowed by a context switch per item. A capacity of 1 or 2 wakes on every pop.
    const bool wake = m_push_waiters > 0 && m_items.size() <= m_capacity / 2;
    const auto size = static_cast<double>(m_items.size());
    lock.unlock();
    if (m_depth_counter != nullptr) profile_counter(m_depth_counter, size);
    if (wake) m_not_full.notify_all();
  }

  const size_t m_capacity;
  mutable std::mutex m_mutex;
  std::condition_variable m_not_full;
  std::condition_variable m_not_empty;
  std::deque<T> m_items;
  const char* m_depth_counter = nullptr;
  int32_t m_push_waiters = 0;
  int32_t m_pop_waiters = 0;
  bool m_closed = false;
  bool m_cancelled = false;
  BoundedQueueStats m_stats;
};

}  // namespace kiln
