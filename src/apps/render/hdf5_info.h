// `kiln info FILE`: a human-readable description of a kiln HDF5 file (part, shard, single file or VDS) or of a
// shard manifest (.json): datasets with shapes, dtypes and filters, root attributes, and a per-shard table.
#pragma once

#include <string>

#include "kiln/status.h"

namespace kiln {

Status hdf5_info_print(const std::string& path, std::string* out);

}  // namespace kiln
