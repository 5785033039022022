#include "io/video/photo_frames.h"

#include <algorithm>

#include "kiln/codec.h"

namespace kiln {

Status photo_frames_write(VideoWriter& writer, const std::string& photo, int32_t width, int32_t height, int32_t frames,
                          int32_t step, int64_t* pts) {
  DecodeOptions decode;
  decode.channels = 3;
  KILN_TRY_ASSIGN(const ImageBuffer p, image_decode_file(photo, decode));
  const int32_t w = std::min(width, p.width * height / p.height);
  ImageBuffer frame;
  frame.width = width;
  frame.height = height;
  frame.channels = 3;
  for (int32_t i = 0; i < frames; ++i) {
    frame.pixels.assign(static_cast<size_t>(width) * height * 3, 48);
    const int32_t ox = (width - w) / 2 + step * i - step * frames / 2;
    for (int32_t y = 0; y < height; ++y) {
      const uint8_t* src = &p.pixels[static_cast<size_t>(y * p.height / height) * p.width * 3];
      for (int32_t x = std::max(0, -ox); x < w && ox + x < width; ++x) {
        std::copy(src + (x * p.width / w) * 3, src + (x * p.width / w) * 3 + 3,
                  &frame.pixels[(static_cast<size_t>(y) * width + ox + x) * 3]);
      }
    }
    KILN_TRY(writer.write(frame.view(), (*pts)++));
  }
  return Status::ok();
}

}  // namespace kiln
