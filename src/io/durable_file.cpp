#include "io/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <filesystem>

namespace kiln {

namespace fs = std::filesystem;

namespace {

Status fd_fsync(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return errno_status(path + ": cannot open for fsync");
  FdCloser closer(fd);
  int rc = 0;
  do {
    rc = ::fsync(fd);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0 && !(errno == EINVAL && (flags & O_DIRECTORY) != 0)) return errno_status(path + ": fsync failed");
  return Status::ok();
}

}  // namespace

FdCloser::~FdCloser() {
  if (m_fd >= 0) ::close(m_fd);
}

Status fd_write_all(int fd, const void* data, size_t size, const std::string& what) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status(what + ": write failed");
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status::ok();
}

Status fd_pwrite_all(int fd, const void* data, size_t size, int64_t offset, const std::string& what) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, p, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status(what + ": write failed");
    }
    p += n;
    size -= static_cast<size_t>(n);
    offset += n;
  }
  return Status::ok();
}

Status file_fsync(const std::string& path) { return fd_fsync(path, O_RDONLY); }

Status dir_fsync(const std::string& dir) { return fd_fsync(dir.empty() ? "." : dir, O_RDONLY | O_DIRECTORY); }

Status file_commit(const std::string& tmp, const std::string& final_path) {
  KILN_TRY(file_fsync(tmp));
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) return errno_status("cannot rename " + tmp + " to " + final_path);
  return dir_fsync(path_parent(final_path));
}

Result<std::string> temp_file_create(const std::string& final_path) {
  const fs::path p(final_path);
  // Appended, not "." + string&&: GCC 12 warns falsely (-Wrestrict) about the insert that operator+ inlines.
  std::string name = ".";
  name += p.filename().string();
  name += ".tmp.XXXXXX";
  std::string tmpl = (p.parent_path() / name).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return errno_status(final_path + ": cannot create a temporary file");
  // mkstemp creates 0600; give the final file the usual 0666 & ~umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  return tmpl;
}

namespace {

Status file_write_commit(const std::string& tmp, const std::string& path, const void* data, size_t size) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status(tmp + ": cannot create");
  {
    FdCloser closer(fd);
    KILN_TRY(fd_write_all(fd, data, size, tmp));
    if (::close(closer.release()) != 0) return errno_status(tmp + ": close failed");
  }
  return file_commit(tmp, path);
}

}  // namespace

Status file_write_atomic(const std::string& path, const void* data, size_t size, TempName temp) {
  std::string tmp = path + ".tmp";
  if (temp == TempName::kUnique) {
    KILN_TRY_ASSIGN(tmp, temp_file_create(path));
  }
  const Status s = file_write_commit(tmp, path, data, size);
  if (s.is_ok()) return s;
  ::unlink(tmp.c_str());
  // A unique temporary name means nothing to the user: name the file asked for. (A fixed `.tmp` name stays: it may
  // be the problem itself, e.g. a folder in its way.)
  std::string message = s.message();
  if (temp == TempName::kUnique && message.rfind(tmp, 0) == 0) message = path + message.substr(tmp.size());
  return Status(s.code(), message);
}

Status file_copy_atomic(const std::string& from, const std::string& to) {
  KILN_TRY_ASSIGN(const std::vector<uint8_t> bytes, file_read_all(from, INT64_MAX));
  return file_write_atomic(to, bytes.data(), bytes.size());
}

void temp_files_remove(const std::string& folder, const std::string& name) {
  const std::string prefix = "." + name;
  constexpr size_t kSuffix = 11;  // ".tmp.XXXXXX"
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder.empty() ? "." : folder, ec)) {
    const std::string file = entry.path().filename().string();
    const bool sized = name.empty() ? file.size() > prefix.size() + kSuffix : file.size() == prefix.size() + kSuffix;
    const bool temporary = sized && file.rfind(prefix, 0) == 0 && file.compare(file.size() - kSuffix, 5, ".tmp.") == 0;
    if (temporary && entry.is_regular_file(ec)) fs::remove(entry.path(), ec);
  }
}

std::string path_extension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

std::string path_parent(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

Status parent_folder_create(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return Status::ok();
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) return io_error("cannot create " + parent.string() + ": " + ec.message());
  return Status::ok();
}

}  // namespace kiln
