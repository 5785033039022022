// Decoders of the formats a crawler meets besides JPEG and PNG, each through its maintained library from Debian:
// WebP (libwebp; animated: the first frame), GIF (giflib; the first frame), BMP (stb_image), TIFF (libtiff; the
// first page, strips or tiles, 8/16-bit, RGB/gray/palette/CMYK/YCbCr), HEIC and AVIF (libheif with its libde265,
// dav1d and aom decoders). Each refuses an image over max_pixels after its header, before the pixels are allocated,
// and returns the orientation and ICC profile it found for image_decode to apply (HEIF: libheif applies the
// container's rotation and mirroring itself). Errors are UnsupportedFormat "<format>: <why>".
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/deadline.h"
#include "io/png_codec.h"  // DecodedImage
#include "kiln/status.h"

namespace kiln {

Result<DecodedImage> webp_decode(const uint8_t* data, size_t size, int64_t max_pixels);
// Transparent pixels and the canvas the first frame leaves uncovered are transparent black (RGBA); without either,
// RGB.
Result<DecodedImage> gif_decode(const uint8_t* data, size_t size, int64_t max_pixels, const Deadline& deadline);
Result<DecodedImage> bmp_decode(const uint8_t* data, size_t size, int64_t max_pixels);
Result<DecodedImage> tiff_decode(const uint8_t* data, size_t size, int64_t max_pixels, const Deadline& deadline);
Result<DecodedImage> heif_decode(const uint8_t* data, size_t size, int64_t max_pixels);

}  // namespace kiln
