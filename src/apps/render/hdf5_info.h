// `kiln info FILE`: a human-readable description of a kiln HDF5 file (part, shard, single file or VDS) or of a
// shard manifest (.json): datasets with shapes, dtypes and filters, root attributes, and a per-shard table.
#pragma once

#include <string>

#include "kiln/status.h"

namespace kiln {

Status hdf5_info_print(const std::string& path, std::string* out);
// `kiln info --verify`: one "<file>: ok" line per data file (the file itself, or each file a VDS maps); IoError
// "<file> is damaged: images checksum ..." at the first damaged one.
Status hdf5_verify(const std::string& path, std::string* out);

}  // namespace kiln
