// Injectable time source for the pipeline (batcher deadlines, queue delays, timeouts).
// SteadyClock for production, ManualClock for deterministic tests (no sleeps).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace kiln {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time in nanoseconds; only differences are meaningful.
  virtual int64_t now() const = 0;
  // True when now() advances with wall time, so waiting on a condition variable for
  // (deadline - now()) real nanoseconds reaches the deadline. A manual clock is not.
  virtual bool is_real_time() const { return false; }
};

class SteadyClock final : public Clock {
 public:
  int64_t now() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  bool is_real_time() const override { return true; }

  // Process-wide instance (stateless, so sharing it is free).
  static const SteadyClock& instance() {
    static const SteadyClock kClock;
    return kClock;
  }
};

// Time moves only when the test says so. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ns = 0) : m_now(start_ns) {}

  int64_t now() const override { return m_now.load(std::memory_order_acquire); }
  void set_ns(int64_t ns) { m_now.store(ns, std::memory_order_release); }
  void advance_ns(int64_t ns) { m_now.fetch_add(ns, std::memory_order_acq_rel); }
  void advance_us(int64_t us) { advance_ns(us * 1000); }
  void advance_ms(int64_t ms) { advance_ns(ms * 1000 * 1000); }

 private:
  std::atomic<int64_t> m_now;
};

}  // namespace kiln
