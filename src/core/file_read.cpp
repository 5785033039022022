#include "core/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace kiln {

Result<std::vector<uint8_t>> file_read_all(const std::string& path, int64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_status(path + ": cannot open");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno_status(path + ": cannot stat");
  if (!S_ISREG(st.st_mode)) return io_error(path + ": not a regular file");
  if (st.st_size > max_bytes) {
    return io_error(path + ": " + std::to_string(st.st_size) + " bytes, over the limit of " +
                    std::to_string(max_bytes));
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(path + ": cannot read");
    if (n == 0) break;  // shrank while reading
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

Result<std::string> file_read_text(const std::string& path) {
  KILN_TRY_ASSIGN(const std::vector<uint8_t> bytes, file_read_all(path, INT64_MAX));
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace kiln
