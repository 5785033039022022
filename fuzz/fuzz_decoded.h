// What the per-format decoder harnesses share: a decoded image goes on through the orientation and the colour
// profile, as image_decode takes it (the EXIF and ICC bytes come from the input too).
#pragma once

#include <cstdlib>

#include "io/icc_srgb.h"
#include "io/image_orientation.h"
#include "io/png_codec.h"

namespace kiln::fuzz {

// The pixel limit of every decoder harness: the fuzzer explores the parsers rather than big allocations.
inline constexpr int64_t kDecoderMaxPixels = int64_t{4} << 20;

inline void decoded_finish(Result<DecodedImage> decoded) {
  if (!decoded.is_ok()) return;
  DecodedImage& image = decoded.value();
  const size_t expected = static_cast<size_t>(image.width) * image.height * image.channels;
  if (image.pixels.size() != expected || image.width * int64_t{image.height} > kDecoderMaxPixels) std::abort();
  image_orient(&image);
  (void)icc_to_srgb(&image);
}

}  // namespace kiln::fuzz
