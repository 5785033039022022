// The pixel-count check every decoder makes after reading a header and before allocating pixels.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/status.h"

namespace kiln {

// InvalidArgument "<who>: WxH image exceeds the limit of N pixels" (image_decode reports it as UnsupportedFormat),
// UnsupportedFormat for an empty size.
inline Status decode_pixels_check(const char* who, int64_t width, int64_t height, int64_t max_pixels) {
  if (width <= 0 || height <= 0 || width > INT32_MAX || height > INT32_MAX)
    return unsupported_format(std::string(who) + ": invalid image size");
  if (width * height > max_pixels)
    return invalid_argument(std::string(who) + ": " + std::to_string(width) + "x" + std::to_string(height) +
                            " image exceeds the limit of " + std::to_string(max_pixels) + " pixels");
  return Status::ok();
}

}  // namespace kiln
