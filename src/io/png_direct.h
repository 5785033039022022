// A PNG reader for the files most photographs and charts are: 8-bit gray, RGB or RGBA, not interlaced, no tRNS.
// It checks what libspng checks on such files (every chunk's CRC, the zlib stream and its Adler-32, a complete
// IEND) and undoes the row filters with SSE2 (io/png_defilter.h): libspng's scalar Paeth filter made a 512x512 RGB
// photograph cost 3.2 ms. Anything else (other formats, every damaged file, a decode past its deadline) is left to
// libspng, which decodes it or says what is wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/deadline.h"
#include "io/png_codec.h"

namespace kiln {

// The decoded image, or std::nullopt when this reader does not take the file (then use libspng).
std::optional<DecodedImage> png_decode_direct(const uint8_t* data, size_t size, int64_t max_pixels,
                                              const Deadline& deadline);

}  // namespace kiln
