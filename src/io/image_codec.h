// Internal helpers of the codec shared with the tensor writer and the CLI: temporary files next to their final
// path and the durable commit (fsync, rename, fsync of the folder).
#pragma once

#include <string>

#include "kiln/status.h"

namespace kiln {

// A new, empty temporary file in the folder of `final_path` ("<dir>/.<name>.tmp.XXXXXX"); returns its path.
Result<std::string> temp_file_create(const std::string& final_path);
// fsyncs `tmp`, renames it over `final_path` and fsyncs the folder.
Status temp_file_commit(const std::string& tmp, const std::string& final_path);
// Copies a file byte for byte through a temporary file and rename.
Status file_copy_atomic(const std::string& from, const std::string& to);

}  // namespace kiln
