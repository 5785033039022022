// A point in time after which a long operation gives up (a per-image decode timeout, for instance).
#pragma once

#include <chrono>

namespace kiln {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  static Deadline never() { return Deadline(); }
  // seconds <= 0: never.
  static Deadline after(double seconds) {
    Deadline d;
    if (seconds > 0) {
      d.m_limited = true;
      d.m_seconds = seconds;
      d.m_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    }
    return d;
  }

  bool passed() const { return m_limited && Clock::now() >= m_at; }
  double seconds() const { return m_seconds; }  // the limit as given

 private:
  bool m_limited = false;
  double m_seconds = 0;
  Clock::time_point m_at{};
};

}  // namespace kiln
