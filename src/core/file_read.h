// Reading a whole file, for every layer that loads one (models, configs, images, manifests).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

// The whole file; IoError "<path>: ..." when it cannot be opened, is not a regular file or is larger than
// `max_bytes`.
Result<std::vector<uint8_t>> file_read_all(const std::string& path, int64_t max_bytes);
Result<std::string> file_read_text(const std::string& path);

}  // namespace kiln
