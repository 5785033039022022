#include "common/photo_video.h"

#include <gtest/gtest.h>

#include <algorithm>

#if KILN_HAS_VIDEO
#include "io/video/video_writer.h"
#include "kiln/codec.h"
#endif

namespace kiln::test {

void photo_video_write(const std::string& photo, const std::string& path, int width, int height, int frames) {
#if KILN_HAS_VIDEO
  DecodeOptions decode;
  decode.channels = 3;
  auto img = image_decode_file(photo, decode);
  ASSERT_TRUE(img.is_ok()) << img.status().to_string();
  const ImageBuffer& p = img.value();
  const int h = height, w = std::min(width, p.width * height / p.height);
  VideoWriterOptions o;
  o.width = width;
  o.height = height;
  o.time_base = {1, 30};
  auto writer = VideoWriter::open(path, o);
  ASSERT_TRUE(writer.is_ok()) << writer.status().to_string();
  ImageBuffer frame;
  frame.width = width;
  frame.height = height;
  frame.channels = 3;
  for (int i = 0; i < frames; ++i) {
    frame.pixels.assign(static_cast<size_t>(width) * height * 3, 48);
    const int ox = (width - w) / 2 + i * 3 - frames * 3 / 2;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const int fx = ox + x;
        if (fx < 0 || fx >= width) continue;
        const uint8_t* s = &p.pixels[(static_cast<size_t>(y * p.height / h) * p.width + x * p.width / w) * 3];
        std::copy(s, s + 3, &frame.pixels[(static_cast<size_t>(y) * width + fx) * 3]);
      }
    }
    ASSERT_TRUE(writer.value()->write(frame.view(), i).is_ok());
  }
  ASSERT_TRUE(writer.value()->finish().is_ok());
#else
  GTEST_FAIL() << "this kiln is built without FFmpeg: cannot write " << path << " from " << photo;
#endif
}

}  // namespace kiln::test
