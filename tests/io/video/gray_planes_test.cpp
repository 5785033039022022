// GrayPlanes writes the same YUV planes as swscale's conversion of a gray frame, for every level and frame size.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "io/video/gray_planes.h"

extern "C" {
#include <libavutil/frame.h>
}

namespace kiln {
namespace {

constexpr int kFlags = SWS_BILINEAR | SWS_ACCURATE_RND;  // the writer's

AvFramePtr frame_make(AVPixelFormat format, int width, int height) {
  AvFramePtr frame(av_frame_alloc());
  frame->format = format;
  frame->width = width;
  frame->height = height;
  EXPECT_EQ(av_frame_get_buffer(frame.get(), 0), 0);
  return frame;
}

// Compares the planes' visible bytes (chroma_width in bytes).
void expect_planes_equal(const AVFrame& a, const AVFrame& b, int planes, int chroma_width, int chroma_height) {
  for (int plane = 0; plane < planes; ++plane) {
    const int w = plane == 0 ? a.width : chroma_width;
    const int h = plane == 0 ? a.height : chroma_height;
    for (int row = 0; row < h; ++row) {
      const uint8_t* pa = a.data[plane] + static_cast<ptrdiff_t>(row) * a.linesize[plane];
      const uint8_t* pb = b.data[plane] + static_cast<ptrdiff_t>(row) * b.linesize[plane];
      ASSERT_EQ(std::vector<uint8_t>(pa, pa + w), std::vector<uint8_t>(pb, pb + w))
          << "plane " << plane << " row " << row << " of " << a.width << "x" << a.height;
    }
  }
}

void check(AVPixelFormat format, int width, int height, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> gray(static_cast<size_t>(width) * height);
  for (size_t i = 0; i < gray.size(); ++i) gray[i] = i < 256 ? static_cast<uint8_t>(i) : static_cast<uint8_t>(rng());
  // Masks are mostly runs of 0 and 255: half of the rows are, in short runs (eight pixels mixed, the lookup) and long
  // ones (eight of a level at once), each with a level between them now and then.
  for (int row = 0; row < height; row += 2) {
    const int run = row % 4 == 0 ? 7 : 37;
    for (int x = 0; x < width; ++x) gray[static_cast<size_t>(row) * width + x] = (x / run) % 2 ? 255 : 0;
    if (width > 50) gray[static_cast<size_t>(row) * width + 40 + row % 9] = static_cast<uint8_t>(rng());
  }
  SwsContextPtr scaler(sws_getContext(width, height, AV_PIX_FMT_GRAY8, width, height, format, kFlags, nullptr, nullptr,
                                      nullptr));
  ASSERT_TRUE(scaler);
  AvFramePtr expected = frame_make(format, width, height);
  const uint8_t* src[4] = {gray.data(), nullptr, nullptr, nullptr};
  const int stride[4] = {width, 0, 0, 0};
  sws_scale(scaler.get(), src, stride, 0, height, expected->data, expected->linesize);

  auto planes = GrayPlanes::make(format, kFlags);
  ASSERT_TRUE(planes.is_ok()) << planes.status().to_string();
  AvFramePtr got = frame_make(format, width, height);
  planes->convert(image_view_packed(gray.data(), width, height, 1, PixelType::kU8), got.get());
  const bool nv12 = format == AV_PIX_FMT_NV12;
  const bool sub = format == AV_PIX_FMT_YUV420P || nv12;
  expect_planes_equal(*expected, *got, nv12 ? 2 : 3, nv12 ? width : sub ? (width + 1) / 2 : width,
                      sub ? (height + 1) / 2 : height);
}

TEST(GrayPlanes, EqualSwscaleForYuv420) {
  check(AV_PIX_FMT_YUV420P, 1280, 720, 1);
  check(AV_PIX_FMT_YUV420P, 64, 36, 2);
  check(AV_PIX_FMT_YUV420P, 256, 2, 3);
  check(AV_PIX_FMT_YUV420P, 101, 38, 4);  // a row that does not end on eight pixels
}

// NV12: the host side of NVENC's device frames (kiln segment's masks written on the device take these levels).
TEST(GrayPlanes, EqualSwscaleForNv12) {
  check(AV_PIX_FMT_NV12, 1280, 720, 6);
  check(AV_PIX_FMT_NV12, 64, 36, 7);
  auto planes = GrayPlanes::make(AV_PIX_FMT_NV12, kFlags);
  ASSERT_TRUE(planes.is_ok());
  EXPECT_EQ(planes->luma(0), 16);  // limited range, as the encoder is told
  EXPECT_EQ(planes->luma(255), 235);
  EXPECT_EQ(planes->u(), 128);
  EXPECT_EQ(planes->v(), 128);
}

TEST(GrayPlanes, EqualSwscaleForYuv444OfOddSizes) {
  check(AV_PIX_FMT_YUV444P, 321, 181, 4);
  check(AV_PIX_FMT_YUV444P, 257, 3, 5);
}

TEST(GrayPlanes, OtherFormatsAreLeftToSwscale) {
  EXPECT_EQ(GrayPlanes::make(AV_PIX_FMT_RGB24, kFlags).status().code(), Errc::kUnsupportedFormat);
}

}  // namespace
}  // namespace kiln
