// Files that are either complete or absent, also after a crash or a power loss: write to a temporary file in the
// destination folder, fsync it, rename it over the final name, fsync the folder. Plus the POSIX loops every writer
// needs (all bytes written despite short writes and EINTR) and the one errno -> Status conversion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/file_read.h"
#include "kiln/status.h"

namespace kiln {

// Closes a file descriptor when it goes out of scope.
class FdCloser {
 public:
  explicit FdCloser(int fd) : m_fd(fd) {}
  ~FdCloser();
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  int release() { return std::exchange(m_fd, -1); }

 private:
  int m_fd;
};

// Every byte, retrying short writes and EINTR; IoError "<what>: write failed: ..." otherwise.
Status fd_write_all(int fd, const void* data, size_t size, const std::string& what);
Status fd_pwrite_all(int fd, const void* data, size_t size, int64_t offset, const std::string& what);

Status file_fsync(const std::string& path);
// Some file systems refuse fsync on folders (EINVAL): that is not a failure kiln can act on, so it is ignored.
Status dir_fsync(const std::string& dir);
// Creates the folder `path` goes into (and its parents), if any is missing.
Status parent_folder_create(const std::string& path);
// fsyncs `tmp`, renames it over `final_path` and fsyncs the folder: readers see the old file or the new one.
Status file_commit(const std::string& tmp, const std::string& final_path);

// A new, empty temporary file with a unique name in the folder of `final_path` ("<dir>/.<name>.tmp.XXXXXX",
// mode 0666 & ~umask); for outputs that several processes might write at once. Returns its path.
Result<std::string> temp_file_create(const std::string& final_path);
// Removes what killed writes left in `folder`: temp_file_create's ".<name>.tmp.XXXXXX" files — every one, or with
// `name`, only those of that file. For a resumed job, whose output folder must end as an uninterrupted run's.
void temp_files_remove(const std::string& folder, const std::string& name = "");
// How file_write_atomic names its temporary file: kUnique (temp_file_create) for outputs that several processes
// might write at once; kFixed (`path.tmp`) for a sink's own files, so that a resumed job finds and removes what a
// killed one left behind.
enum class TempName : uint8_t { kUnique = 0, kFixed };
// Writes the bytes to a temporary file and commits it as `path`; on failure the temporary file is removed and
// `path` is as it was.
Status file_write_atomic(const std::string& path, const void* data, size_t size, TempName temp = TempName::kUnique);
inline Status file_write_atomic(const std::string& path, const std::string& bytes, TempName temp = TempName::kUnique) {
  return file_write_atomic(path, bytes.data(), bytes.size(), temp);
}
// Copies a file byte for byte through a unique temporary file and a commit.
Status file_copy_atomic(const std::string& from, const std::string& to);

std::string path_parent(const std::string& path);  // "." for a bare name
// The file name's extension, lowercase, with its dot (".npy"); "" when it has none. What a path says about its
// format, in one place.
std::string path_extension(const std::string& path);

}  // namespace kiln
