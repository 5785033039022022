// GIF's LZW image data decoded into palette indices. giflib parses the file and hands over the compressed bytes
// (DGifGetCode); this decoder copies each code's string from where it was written before in the output, instead of
// walking the code table byte by byte as giflib's DGifGetLine does (about three times faster on large images).
#pragma once

#include <cstdint>
#include <vector>

#include "core/deadline.h"
#include "kiln/status.h"

namespace kiln {

// Decodes `data` (the image's sub-blocks joined, without their length bytes) with LZW minimum code size
// `min_code_size` (2-8) into `out` (`count` indices, the frame's pixels in stored order). Stops at the end code or
// when `out` is full; data that ends before is an error, as are codes that are not yet in the table.
Status gif_lzw_decode(const std::vector<uint8_t>& data, int32_t min_code_size, uint8_t* out, size_t count,
                      const Deadline& deadline);

}  // namespace kiln
