// Colour management with lcms2: decoded pixels tagged with an ICC profile (Display P3 from phones, Adobe RGB from
// cameras) converted to sRGB, which is what every model and metric in kiln assumes, and CMYK (print and stock-photo
// JPEGs) converted to RGB. Transforms are cached per thread and profile.
#pragma once

#include <cstdint>
#include <vector>

#include "io/png_codec.h"  // DecodedImage
#include "kiln/status.h"

namespace kiln {

// RGB or RGBA pixels with a non-sRGB RGB profile in image->icc, converted to sRGB in place (alpha kept); gray
// images, sRGB profiles and untagged images as they are. A profile lcms2 cannot read is UnsupportedFormat ("icc
// profile: ..."). Clears image->icc.
Status icc_to_srgb(DecodedImage* image);

// `count` CMYK pixels (Adobe's inverted CMYK when `inverted`: 255 = no ink) to packed RGB. Through the image's own
// CMYK profile where there is one, else by the plain formula R = (1 - C)(1 - K) (as OpenCV and Pillow without a
// profile).
Status cmyk_to_rgb(const uint8_t* cmyk, int64_t count, bool inverted, const std::vector<uint8_t>& icc, uint8_t* rgb);

}  // namespace kiln
