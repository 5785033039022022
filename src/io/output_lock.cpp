#include "io/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "io/durable_file.h"

namespace kiln {

namespace {

std::string lock_path_for(std::string output) {
  while (output.size() > 1 && output.back() == '/') output.pop_back();  // a folder output: pngs/ -> pngs.lock
  return output + ".lock";
}

std::string owner_of(int fd) {
  char text[32] = {0};
  const ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
  const long pid = n > 0 ? std::strtol(text, nullptr, 10) : 0;
  return pid > 0 ? "pid " + std::to_string(pid) : "pid unknown";
}

}  // namespace

OutputLock::~OutputLock() { release(); }

OutputLock::OutputLock(OutputLock&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_path(std::move(other.m_path)) {}

OutputLock& OutputLock::operator=(OutputLock&& other) noexcept {
  if (this != &other) {
    release();
    m_fd = std::exchange(other.m_fd, -1);
    m_path = std::move(other.m_path);
  }
  return *this;
}

Result<OutputLock> OutputLock::acquire(const std::string& output) {
  OutputLock lock;
  lock.m_path = lock_path_for(output);
  KILN_TRY(parent_folder_create(lock.m_path));  // the output's folder may not exist yet: the lock lives there too
  // A writer that finishes unlinks its lock file; one that opened the old file before the unlink must not lock that
  // orphan while a third process locks a new file, hence the same-inode check and retry.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(lock.m_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return errno_status(lock.m_path + ": cannot create the output lock");
    FdCloser closer(fd);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) return errno_status(lock.m_path + ": cannot lock");
      return invalid_argument(output + " is being written by another process (" + owner_of(fd) + ", lock " +
                              lock.m_path + "); wait for it to finish or stop it");
    }
    struct stat held {};
    struct stat named {};
    if (::fstat(fd, &held) != 0) return errno_status(lock.m_path + ": cannot stat");
    if (::stat(lock.m_path.c_str(), &named) != 0 || held.st_ino != named.st_ino || held.st_dev != named.st_dev) {
      continue;  // unlinked under us by a finishing writer: take the new one
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0) return errno_status(lock.m_path + ": cannot write");
    KILN_TRY(fd_pwrite_all(fd, pid.data(), pid.size(), 0, lock.m_path));
    lock.m_fd = closer.release();
    return lock;
  }
  return io_error(lock.m_path + ": the lock file keeps changing; is another kiln starting and stopping?");
}

void OutputLock::release() {
  if (m_fd < 0) return;
  ::unlink(m_path.c_str());  // while still locked: nobody can hold a lock on a name that is about to vanish
  ::close(m_fd);
  m_fd = -1;
}

}  // namespace kiln
