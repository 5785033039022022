// One writer per output: `{output}.lock` beside it, held with flock() for the writer's lifetime and holding its pid.
// The kernel drops the lock when the process dies (kill -9 included), so a stale file never blocks a resume; the
// file is removed when the writer is done.
#pragma once

#include <string>

#include "kiln/status.h"

namespace kiln {

class OutputLock {
 public:
  OutputLock() = default;
  ~OutputLock();
  OutputLock(OutputLock&& other) noexcept;
  OutputLock& operator=(OutputLock&& other) noexcept;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  // InvalidArgument "out.h5 is being written by another process (pid 123, lock out.h5.lock)" when held elsewhere.
  static Result<OutputLock> acquire(const std::string& output);
  void release();
  const std::string& path() const { return m_path; }

 private:
  int m_fd = -1;
  std::string m_path;
};

}  // namespace kiln
