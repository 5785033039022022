// The NPY v1.0 header (numpy's .npy format): what kiln writes before an array's data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/image.h"

namespace kiln {

// "|u1", "<f2", "<f4" (native byte order).
const char* npy_descr(PixelType type);

// Magic, version 1.0, header length, then "{'descr': ..., 'fortran_order': False, 'shape': (...), }" padded with
// spaces and a newline to `total_bytes` (0: to the next multiple of 64, where numpy puts the data). Empty when the
// dictionary does not fit in `total_bytes`.
std::string npy_header(PixelType type, const std::vector<int64_t>& shape, size_t total_bytes = 0);
// The same for any numpy type string, e.g. "<U40" (UTF-32 strings of up to 40 characters).
std::string npy_header(const std::string& descr, const std::vector<int64_t>& shape, size_t total_bytes = 0);

}  // namespace kiln
