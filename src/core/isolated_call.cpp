#include "core/isolated_call.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kiln {

namespace {

bool write_all(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The child's message: one byte (the Errc), then the payload or the error text.
[[noreturn]] void child_run(int fd, const std::function<Result<std::vector<uint8_t>>()>& fn) {
  // A crash ends the child by its signal, not through a handler the parent installed (a sanitizer's, a fuzzer's).
  for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
  Result<std::vector<uint8_t>> result = fn();
  const auto code = static_cast<uint8_t>(result.is_ok() ? Errc::kOk : result.status().code());
  bool ok = write_all(fd, &code, 1);
  if (result.is_ok()) {
    ok = ok && write_all(fd, result.value().data(), result.value().size());
  } else {
    const std::string& message = result.status().message();
    ok = ok && write_all(fd, message.data(), message.size());
  }
  ::_exit(ok ? 0 : 1);
}

}  // namespace

Result<std::vector<uint8_t>> isolated_call(const std::function<Result<std::vector<uint8_t>>()>& fn,
                                           const std::string& what) {
  int fds[2];
  if (::pipe(fds) != 0) return io_error(what + ": pipe failed: " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return io_error(what + ": fork failed: " + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_run(fds[1], fn);
  }
  ::close(fds[1]);
  std::vector<uint8_t> bytes;
  uint8_t buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    return unsupported_format(what + ": the reader crashed on this file (signal " + std::to_string(WTERMSIG(status)) +
                              "): it is malformed");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || bytes.empty()) {  // e.g. a sanitizer's report and exit
    return unsupported_format(what + ": the reader failed on this file (exit " +
                              std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "): it is malformed");
  }
  const auto code = static_cast<Errc>(bytes[0]);
  if (code != Errc::kOk) return Status(code, std::string(bytes.begin() + 1, bytes.end()));
  bytes.erase(bytes.begin());
  return bytes;
}

}  // namespace kiln
