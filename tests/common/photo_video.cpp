#include "common/photo_video.h"

#include <gtest/gtest.h>

#if KILN_HAS_VIDEO
#include "io/video/photo_frames.h"
#include "io/video/video_reader.h"
#endif

namespace kiln::test {

void photo_video_write(const std::string& photo, const std::string& path, int width, int height, int frames) {
#if KILN_HAS_VIDEO
  VideoWriterOptions o;
  o.width = width;
  o.height = height;
  o.time_base = {1, 30};
  auto writer = VideoWriter::open(path, o);
  ASSERT_TRUE(writer.is_ok()) << writer.status().to_string();
  int64_t pts = 0;
  const Status st = photo_frames_write(*writer.value(), photo, width, height, frames, 3, &pts);
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  ASSERT_TRUE(writer.value()->finish().is_ok());
#else
  GTEST_FAIL() << "this kiln is built without FFmpeg: cannot write " << path << " from " << photo;
#endif
}

std::vector<ImageBuffer> video_frames_read(const std::string& path) {
  std::vector<ImageBuffer> frames;
#if KILN_HAS_VIDEO
  auto reader = VideoReader::open(path);
  EXPECT_TRUE(reader.is_ok()) << reader.status().to_string();
  if (!reader.is_ok()) return frames;
  for (;;) {
    VideoFrame f;
    bool end = false;
    if (!reader.value()->read(&f, &end).is_ok() || end) break;
    frames.push_back(std::move(f.rgb));
  }
#else
  ADD_FAILURE() << "this kiln is built without FFmpeg: cannot read " << path;
#endif
  return frames;
}

}  // namespace kiln::test
