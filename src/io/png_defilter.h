// Undoing PNG's row filters (PNG specification §9): a filtered row becomes pixels, given the pixels of the row
// above. png_defilter_row uses SSE2 for 3- and 4-byte pixels (RGB, RGBA), where the Sub, Average and Paeth filters
// are a chain from one pixel to the next that scalar code walks a byte at a time; png_defilter_row_scalar is the
// reference it is tested against.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln {

// `filtered`: the row's row_bytes filtered bytes (after its filter-type byte); `prev`: the row above, already
// undone (zeros above the first row); `out` gets the pixels. bpp: bytes per pixel, 1 to 8. `out` may not overlap
// the others. False for a filter type above 4 (out is then unspecified).
bool png_defilter_row(uint8_t filter, const uint8_t* filtered, const uint8_t* prev, uint8_t* out, size_t row_bytes,
                      size_t bpp);
bool png_defilter_row_scalar(uint8_t filter, const uint8_t* filtered, const uint8_t* prev, uint8_t* out,
                             size_t row_bytes, size_t bpp);

}  // namespace kiln
