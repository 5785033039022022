// kiln segment --preview: frames sampled evenly across any length, the person probability blended over a real
// photograph exactly as stated, the plots' points where the series put them, and the job writing the picture.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "apps/segment/segment_preview.h"
#include "common/photo_video.h"
#include "kiln/apps/segment.h"
#include "kiln/codec.h"

namespace kiln {
namespace {

// This binary links no test utilities (the ThreadSanitizer build builds it alone): its own scratch folder.
struct ScratchDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("kiln_segment_preview_" + std::to_string(::getpid()));
  ScratchDir() { std::filesystem::create_directories(path); }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

uint16_t half_of(float v) { return v >= 1.0f ? 0x3c00 : v <= 0.0f ? 0 : 0x3800; }  // 1, 0 or 0.5

ImageBuffer photo() {
  auto image = image_decode_file(test::kAstronautPhoto, DecodeOptions{.channels = 3});
  EXPECT_TRUE(image.is_ok());
  return image.is_ok() ? std::move(image).value() : ImageBuffer{};
}

Rgb png_pixel(const ImageBuffer& png, int32_t x, int32_t y) {
  const uint8_t* p = &png.pixels[(static_cast<size_t>(y) * png.width + x) * 3];
  return {p[0], p[1], p[2]};
}

// Offers frames 0 .. n-1, sampling the wanted ones with an empty probability.
std::vector<int64_t> picked_after(int64_t n, int32_t frames) {
  const ImageBuffer frame = photo();
  const std::vector<uint16_t> none(static_cast<size_t>(frame.width) * frame.height, 0);
  SegmentPreviewStream stream(frames);
  for (int64_t i = 0; i < n; ++i) {
    if (stream.wants(i)) stream.sample(i, i / 30.0, frame.view(), none.data(), frame.width, frame.height);
    stream.frame(i / 30.0, 1, 0);
  }
  std::vector<int64_t> indexes;
  for (const SegmentPreviewSample* s : stream.picked()) indexes.push_back(s->index);
  return indexes;
}

TEST(SegmentPreviewStream, PicksFramesEvenlyAcrossAnyLength) {
  for (const int64_t n : {int64_t{1}, int64_t{3}, int64_t{40}, int64_t{1000}}) {
    const std::vector<int64_t> picked = picked_after(n, 4);
    ASSERT_EQ(picked.size(), static_cast<size_t>(std::min<int64_t>(n, 4))) << n << " frames";
    EXPECT_EQ(picked.front(), 0);
    for (size_t i = 0; i < picked.size() && picked.size() > 1; ++i) {
      const double even = static_cast<double>(i) * static_cast<double>(n - 1) / static_cast<double>(picked.size() - 1);
      EXPECT_LE(std::fabs(static_cast<double>(picked[i]) - even), n / 16.0 + 1) << n << " frames, pick " << i;
    }
  }
}

TEST(SegmentPreview, OverlayAndPlotsAreWhereTheDataSays) {
  const ImageBuffer frame = photo();  // 512 x 512: a 210 x 210 thumbnail
  const size_t pixels = static_cast<size_t>(frame.width) * frame.height;
  std::vector<uint16_t> left_person(pixels), none(pixels, 0);
  for (int32_t y = 0; y < frame.height; ++y) {
    for (int32_t x = 0; x < frame.width; ++x) left_person[static_cast<size_t>(y) * frame.width + x] = half_of(x < 256);
  }
  SegmentPreviewStream with(1), without(1);
  with.sample(0, 0, frame.view(), left_person.data(), frame.width, frame.height);
  without.sample(0, 0, frame.view(), none.data(), frame.width, frame.height);
  const std::vector<double> latencies = {40, 55, NAN, 70, 65};  // frame 2 was dropped
  for (int i = 0; i < 5; ++i) {
    with.frame(i / 30.0, latencies[static_cast<size_t>(i)], 0.1 * i);
    without.frame(i / 30.0, 1, 0);
  }
  ScratchDir dir;
  auto rows = segment_preview_write(dir.file("p.png"), {{"with.mp4", &with, ""}, {"without.mp4", &without, ""},
                                                        {"kept.mp4", nullptr, "finished earlier"}},
                                    1);
  ASSERT_TRUE(rows.is_ok()) << rows.status().message();
  auto png = image_decode_file(dir.file("p.png"), DecodeOptions{.channels = 3});
  ASSERT_TRUE(png.is_ok());
  EXPECT_EQ(png->width, 10 + 2 * 290);  // at least two columns, for the two plots
  const SegmentPreviewRow& a = (*rows)[0];
  const SegmentPreviewRow& b = (*rows)[1];
  ASSERT_EQ(a.thumb_x.size(), 1u);
  EXPECT_TRUE((*rows)[2].thumb_x.empty());
  // Left half: the photo moved 55 % of the way to the overlay ink; right half: the photo as it is.
  for (const auto& [x, y] : {std::pair{30, 100}, std::pair{100, 180}, std::pair{160, 100}, std::pair{200, 30}}) {
    const Rgb plain = png_pixel(*png, b.thumb_x[0] + x, b.thumb_y + y);
    const Rgb got = png_pixel(*png, a.thumb_x[0] + x, a.thumb_y + y);
    if (x < 105) {
      const auto blend = [](uint8_t p, uint8_t ink) {
        return static_cast<uint8_t>(std::lround(p + (ink - p) * kSegmentPreviewOpacity));
      };
      EXPECT_EQ(got, (Rgb{blend(plain.r, ink::kOverlay.r), blend(plain.g, ink::kOverlay.g),
                          blend(plain.b, ink::kOverlay.b)}))
          << x << "," << y;
    } else {
      EXPECT_EQ(got, plain) << x << "," << y;
    }
  }
  // Each latency and share a point of its line; the dropped frame none.
  for (int i = 0; i < 5; ++i) {
    const double t = i / 30.0;
    if (std::isfinite(latencies[static_cast<size_t>(i)])) {
      EXPECT_EQ(png_pixel(*png, a.latency.px(t), a.latency.py(latencies[static_cast<size_t>(i)])), ink::kSeries[0])
          << "latency of frame " << i;
    }
    EXPECT_EQ(png_pixel(*png, a.share.px(t), a.share.py(0.1 * i)), ink::kSeries[1]) << "share of frame " << i;
  }
  EXPECT_DOUBLE_EQ(a.latency.y_max, 70);
  EXPECT_DOUBLE_EQ(a.share.y_max, 1);
  // Between frames 1 and 3 the latency line breaks: nothing is drawn in the middle of that gap.
  const int32_t gap_x = a.latency.px(2 / 30.0);
  for (int32_t y = a.latency.top; y < a.latency.top + a.latency.height; ++y) {
    EXPECT_NE(png_pixel(*png, gap_x, y), ink::kSeries[0]) << "y " << y;
  }
}

TEST(SegmentPreview, TheJobWritesOneBandPerInput) {
  ScratchDir dir;
  const std::string video = dir.file("person.mp4");
  test::photo_video_write(test::kAstronautPhoto, video, 320, 240, 12);
  SegmentJobConfig config;
  config.output_dir = dir.file("out");
  config.output = SegmentOutput::kNpy;
  config.preview = dir.file("p.png");
  config.preview_frames = 3;
  config.exec.mode = ExecMode::kCpu;
  config.exec.threads = 2;
  auto summary = segment_job_run(config, {video, video});
  ASSERT_TRUE(summary.is_ok()) << summary.status().message();
  auto png = image_decode_file(config.preview, DecodeOptions{.channels = 3});
  ASSERT_TRUE(png.is_ok()) << png.status().message();
  EXPECT_EQ(png->width, 10 + 3 * 290);
  // Title 30; per input: name 18, the frames (320 x 240 shown at 280 x 210), 4, plots 130, 10.
  EXPECT_EQ(png->height, 30 + 2 * (18 + 210 + 4 + 130 + 10));
  // The astronaut is found in frame 0: overlay ink in its thumbnail's middle.
  int64_t tinted = 0;
  for (int32_t y = 30 + 18 + 40; y < 30 + 18 + 200; ++y) {
    for (int32_t x = 10; x < 10 + 280; ++x) {
      const Rgb p = png_pixel(*png, x, y);
      tinted += (p.r > p.g + 60 && p.b > p.g + 60) ? 1 : 0;  // magenta-ish
    }
  }
  EXPECT_GT(tinted, 2000);
}

}  // namespace
}  // namespace kiln
