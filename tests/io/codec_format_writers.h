// Files of every decoded format, written by each format's own library (the encoders the decoders' tests need), plus
// the EXIF and ICC pieces that ride in them. Test-only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/codec.h"

namespace kiln::test {

using Bytes = std::vector<uint8_t>;

// A TIFF-structured EXIF block ("Exif\0\0" + little-endian TIFF header + IFD0 with the orientation tag).
Bytes exif_block(int32_t orientation, bool with_exif_header = true);
// A PNG (kiln's encoder) with an eXIf chunk and/or an iCCP chunk inserted after IHDR.
Bytes png_with_chunks(const ImageBuffer& image, const Bytes& exif_tiff, const Bytes& icc);
// A JPEG (kiln's encoder) with an APP1 EXIF segment after SOI.
Bytes jpeg_with_exif(const ImageBuffer& image, int32_t orientation, int32_t quality = 95);
// A CMYK JPEG written by libjpeg from RGB, in Adobe's inverted convention (255 = no ink), with the Adobe marker.
Bytes jpeg_cmyk(const ImageBuffer& rgb, int32_t quality = 95);
// A progressive JPEG (libjpeg's simple progression, its default quality) of 8-bit RGB.
Bytes jpeg_progressive(const ImageBuffer& rgb);

Bytes webp_encode(const ImageBuffer& rgb, bool lossless, int32_t orientation = 1);
// Two frames; the first is `first`, the second its negative.
Bytes webp_animated(const ImageBuffer& first);
// Palette image: RGB pixels of at most 256 distinct colours. `transparent` >= 0 marks that palette index
// transparent; `frames` > 1 appends more frames (each the first, moved).
Bytes gif_encode(const ImageBuffer& rgb, int32_t transparent_index = -1, int32_t frames = 1, bool interlaced = false);
// The image's colours to a 6 x 6 x 6 cube (216 colours): what a GIF can hold exactly.
ImageBuffer palette_quantize(const ImageBuffer& rgb);
Bytes bmp_encode(const ImageBuffer& image);
// A 16-bit PNG (libspng) of gray (1), RGB (3) or RGBA (4) samples, row-major.
Bytes png16_encode(const std::vector<uint16_t>& samples, int32_t width, int32_t height, int32_t channels);
enum class TiffKind { kRgb8, kRgb16, kGray8, kTiled, kPalette, kCmyk };
Bytes tiff_encode(const ImageBuffer& rgb, TiffKind kind, int32_t orientation = 1);
// HEVC (x265) or AV1 (aom) at quality 90, libheif writing irot/imir for `orientation`.
Bytes heif_encode(const ImageBuffer& rgb, bool avif, int32_t orientation = 1);

// An ICC profile (lcms2) with Display P3's primaries and the sRGB tone curve.
Bytes display_p3_profile();

}  // namespace kiln::test
