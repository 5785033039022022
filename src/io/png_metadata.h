// What a PNG says about its pixels besides the pixels: the EXIF orientation (eXIf chunk) and the ICC profile
// (iCCP, zlib-compressed). Read by walking the chunk list, whichever decoder then decodes the pixels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln {

struct PngMetadata {
  int32_t orientation = 1;
  std::vector<uint8_t> icc;
};

// Every chunk header up to IEND (eXIf may follow the image data); a damaged chunk ends the walk with what was found
// so far (the decoder reports the damage).
PngMetadata png_metadata(const uint8_t* data, size_t size);

}  // namespace kiln
