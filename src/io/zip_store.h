// A ZIP archive of files stored without compression: how numpy's .npz holds its
// arrays.
#pragma once

#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

struct ZipMember {
  std::string name;  // the name inside the archive, e.g. "scores.npy"
  std::string path;  // the file to store
};

// Writes `members` into `fd` (an empty file open for writing) in order,
// streaming each file once. Members larger than 4 GiB - 1 bytes or more than
// 65535 members are refused (no ZIP64): InvalidArgument.
Status zip_store_write(int fd, const std::vector<ZipMember>& members, const std::string& what);

}  // namespace kiln
