// Turning decoded pixels upright by their EXIF orientation (1-8), as a viewer shows them: 2 mirror, 3 rotate 180,
// 4 flip, 5 transpose, 6 rotate 90 clockwise, 7 transverse, 8 rotate 90 anticlockwise.
#pragma once

#include <cstdint>

#include "io/png_codec.h"  // DecodedImage

namespace kiln {

// The upright image (width and height swapped for 5-8); `image` as it is for 1 or an unknown value. Sets
// orientation to 1.
void image_orient(DecodedImage* image);

// Where output pixel (x, y) of the upright image lies in the stored image of `width` x `height`.
inline void orientation_source(int32_t orientation, int32_t width, int32_t height, int32_t x, int32_t y,
                               int32_t* sx, int32_t* sy) {
  switch (orientation) {
    case 2: *sx = width - 1 - x; *sy = y; break;
    case 3: *sx = width - 1 - x; *sy = height - 1 - y; break;
    case 4: *sx = x; *sy = height - 1 - y; break;
    case 5: *sx = y; *sy = x; break;
    case 6: *sx = y; *sy = height - 1 - x; break;
    case 7: *sx = width - 1 - y; *sy = height - 1 - x; break;
    case 8: *sx = width - 1 - y; *sy = x; break;
    default: *sx = x; *sy = y; break;
  }
}

}  // namespace kiln
