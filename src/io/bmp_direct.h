// The BMPs nearly every writer makes, read directly: uncompressed 24-bit BGR, 32-bit BGRX/BGRA (BI_RGB, or
// BI_BITFIELDS with the standard masks) and 8-bit palette, bottom-up or top-down. Rows are copied with the channels
// swapped: a fraction of stb_image's per-pixel time. Anything else is left to stb_image (bmp_decode).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "io/png_codec.h"  // DecodedImage

namespace kiln {

// nullopt: not one of these layouts (or damaged), for stb_image to decode or refuse. The caller has checked that
// the file holds the whole pixel array and that width x height is within its limit.
std::optional<DecodedImage> bmp_decode_direct(const uint8_t* data, size_t size);

}  // namespace kiln
