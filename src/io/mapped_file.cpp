#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "io/durable_file.h"

namespace kiln {

Status MappedFile::open(const std::string& path) {
  reset();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return io_error(path + ": no such file");
    return errno_status(path + ": cannot open");
  }
  FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno_status(path + ": cannot stat");
  if (!S_ISREG(st.st_mode)) return io_error(path + ": not a regular file");
  const auto size = static_cast<size_t>(st.st_size);
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) return errno_status(path + ": cannot map");
    ::madvise(p, size, MADV_SEQUENTIAL);
    m_data = p;
    m_size = size;
  }
  return Status::ok();
}

void MappedFile::reset() {
  if (m_data != nullptr) ::munmap(const_cast<void*>(m_data), m_size);
  m_data = nullptr;
  m_size = 0;
}

}  // namespace kiln
