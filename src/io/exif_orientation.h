// The one EXIF field kiln reads: the orientation tag (0x0112) of IFD0, from the TIFF-structured EXIF block that
// JPEG (APP1 "Exif\0\0"), PNG (eXIf), WebP (EXIF chunk) and HEIF carry. Bounded: every offset is checked against
// the block's size, nothing is allocated.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln {

// 1-8 as EXIF defines them; 1 (stored upright) when the block is absent, damaged or says something else. `block`
// may start with the "Exif\0\0" header or directly with the TIFF header ("II*\0" or "MM\0*").
int32_t exif_orientation(const uint8_t* block, size_t size);

}  // namespace kiln
