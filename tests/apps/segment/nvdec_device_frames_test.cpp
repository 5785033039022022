// NVDEC's frames left on the device (VideoReaderOptions::device_frames) and converted there by the CUDA backend's
// NV12 -> RGB (the color op, the same fixed-point math as the CPU reference): the pictures of the software decode,
// within the conversion's difference from swscale's (chroma taken per 2x2 pixels, not interpolated). Where there is
// no NVDEC the frames come to the host as RGB with the reason, as they do once the consumer ends device_frames; the
// CUDA test is SKIPPED here and fails under KILN_REQUIRE_GPU=1.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <deque>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "common/gpu_required.h"
#include "common/photo_video.h"
#include "core/backend_block.h"
#include "io/video/video_reader.h"
#include "kiln/device.h"
#include "kiln/ops.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

class NvdecDeviceFrames : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("kiln_nvdec_frames_" + std::to_string(::getpid()));
    fs::create_directories(m_dir);
    m_video = (m_dir / "person.mp4").string();
    test::photo_video_write(test::kAstronautPhoto, m_video, 640, 360, kFrames);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  std::vector<VideoFrame> read_all(const VideoReaderOptions& options, std::string* decode) {
    std::vector<VideoFrame> frames;
    auto reader = VideoReader::open(m_video, options);
    EXPECT_TRUE(reader.is_ok()) << reader.status().to_string();
    if (!reader.is_ok()) return frames;
    for (;;) {
      VideoFrame frame;
      bool end = false;
      const Status st = reader.value()->read(&frame, &end);
      EXPECT_TRUE(st.is_ok()) << st.to_string();
      if (!st.is_ok() || end) break;
      frames.push_back(std::move(frame));
    }
    *decode = reader.value()->info().decode;
    return frames;
  }

  // The stated tolerance against the software decode's RGB (swscale interpolates chroma; the conversion takes one
  // U, V pair per 2x2 pixels): mean |difference| <= 2 levels, at most 1 % of values more than 12 off.
  static void expect_near_software(const std::vector<uint8_t>& rgb, const PixelBytes& want) {
    ASSERT_EQ(rgb.size(), want.size());
    double sum = 0;
    size_t far = 0;
    for (size_t k = 0; k < rgb.size(); ++k) {
      const int d = std::abs(static_cast<int>(rgb[k]) - static_cast<int>(want[k]));
      sum += d;
      far += d > 12 ? 1 : 0;
    }
    EXPECT_LE(sum / static_cast<double>(rgb.size()), 2.0) << "mean |difference| from the software decode's RGB";
    EXPECT_LE(static_cast<double>(far) / static_cast<double>(rgb.size()), 0.01) << "values more than 12 levels off";
  }

  static constexpr int kFrames = 12;
  fs::path m_dir;
  std::string m_video;
};

TEST_F(NvdecDeviceFrames, WithoutNvdecTheFramesComeAsRgbOnTheHost) {
  VideoReaderOptions options;
  options.hw_decode = VideoHwDecode::kAuto;
  options.device_frames = true;
  std::string decode;
  const std::vector<VideoFrame> frames = read_all(options, &decode);
  ASSERT_EQ(frames.size(), static_cast<size_t>(kFrames));
  if (decode.rfind("cuda", 0) == 0) GTEST_SKIP() << "NVDEC decodes here: the device test below covers it";
  for (const VideoFrame& f : frames) {
    EXPECT_EQ(f.device, nullptr);
    EXPECT_EQ(f.rgb.width, 640);
    EXPECT_EQ(f.rgb.pixels.size(), 640u * 360 * 3);
  }
}

// A consumer that cannot use a frame on the device ends device_frames: that frame (on the device with NVDEC, on the
// host here) and every later one come as RGB, the software decode's pictures, and the decode line says why.
TEST_F(NvdecDeviceFrames, EndedByTheConsumerTheFramesComeToTheHostWithItsReason) {
  std::string software_decode;
  const std::vector<VideoFrame> software = read_all(VideoReaderOptions{}, &software_decode);
  ASSERT_EQ(software.size(), static_cast<size_t>(kFrames));
  VideoReaderOptions options;
  options.hw_decode = VideoHwDecode::kAuto;
  options.device_frames = true;
  options.scale_width = 160;  // frames that come to the host are scaled; device frames come at the decoded size
  options.scale_height = 90;
  auto reader = VideoReader::open(m_video, options);
  ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
  for (int i = 0; i < kFrames; ++i) {
    VideoFrame frame;
    bool end = false;
    ASSERT_TRUE(reader.value()->read(&frame, &end).is_ok());
    ASSERT_FALSE(end);
    if (i == 0 && frame.device != nullptr) {
      EXPECT_EQ(frame.device->width, 640) << "device frames are not scaled";
      EXPECT_NE(reader.value()->info().decode.find("frames kept on the device"), std::string::npos);
    }
    if (i == 0) {
      ASSERT_TRUE(reader.value()->device_frames_end(&frame, "the consumer's reason").is_ok());
    }
    SCOPED_TRACE("frame " + std::to_string(i));
    EXPECT_EQ(frame.device, nullptr);
    EXPECT_EQ(frame.pts, software[static_cast<size_t>(i)].pts);
    ASSERT_EQ(frame.rgb.width, 160);
    ASSERT_EQ(frame.rgb.height, 90);
  }
  EXPECT_NE(reader.value()->info().decode.find("frames to the host: the consumer's reason"), std::string::npos)
      << reader.value()->info().decode;
}

TEST_F(NvdecDeviceFrames, ConvertedOnTheGpuTheyAreTheSoftwareDecodesPictures) {
  Backend* cuda = BackendRegistry::instance().find(BackendKind::kCuda);
  if (cuda == nullptr) {
    const BackendStatus* why = BackendRegistry::instance().status(BackendKind::kCuda);
    KILN_GPU_SKIP("no CUDA backend: " << (why != nullptr ? why->reason : "not registered"));
  }
  std::string software_decode;
  const std::vector<VideoFrame> software = read_all(VideoReaderOptions{}, &software_decode);
  ASSERT_EQ(software.size(), static_cast<size_t>(kFrames));
  VideoReaderOptions options;
  options.hw_decode = VideoHwDecode::kCuda;
  options.cuda_device = BackendRegistry::instance().options().is_ok()
                            ? BackendRegistry::instance().options().value().device_id
                            : 0;
  options.device_frames = true;
  auto reader = VideoReader::open(m_video, options);
  if (!reader.is_ok()) KILN_GPU_SKIP("no NVDEC for this video: " << reader.status().to_string());

  // Up to kHeld frames are held at once (as a consumer with frames in flight does) before each is converted.
  constexpr size_t kHeld = 4;
  std::deque<VideoFrame> held;
  size_t converted = 0;
  const auto convert_oldest = [&] {
    const VideoFrame frame = std::move(held.front());
    held.pop_front();
    const size_t i = converted++;
    SCOPED_TRACE("frame " + std::to_string(i) + " (" + reader.value()->info().decode + ")");
    ASSERT_NE(frame.device, nullptr) << "the frame came to the host";
    EXPECT_TRUE(frame.rgb.empty());
    EXPECT_EQ(frame.pts, software[i].pts);
    const DeviceVideoFrame& f = *frame.device;
    ASSERT_EQ(f.width, 640);
    ASSERT_EQ(f.height, 360);
    EXPECT_GE(f.chroma_row, f.height);

    const size_t bytes = static_cast<size_t>(f.width) * f.height * 3;
    auto block = DeviceBlock::acquire(*cuda, bytes);
    ASSERT_TRUE(block.is_ok()) << block.status().to_string();
    const ImageView in = f.nv12();
    const ImageView out = image_view_packed(block.value().data(), f.width, f.height, 3, PixelType::kU8, Layout::kHWC);
    const ColorParams params = f.to_rgb();
    const Status ran = cuda->run(OpCall{OpKind::kColor, &params, VarShapeBatchView{&in, 1, MemorySpace::kDevice},
                                        VarShapeBatchView{&out, 1, MemorySpace::kDevice}, nullptr},
                                 {});
    ASSERT_TRUE(ran.is_ok()) << ran.to_string();
    std::vector<uint8_t> rgb(bytes);
    ASSERT_TRUE(cuda->device_download(block.value().data(), rgb.data(), bytes).is_ok());
    expect_near_software(rgb, software[i].rgb.pixels);
  };
  for (;;) {
    VideoFrame frame;
    bool end = false;
    const Status st = reader.value()->read(&frame, &end);
    ASSERT_TRUE(st.is_ok()) << st.to_string();
    if (end) break;
    if (reader.value()->info().decode.rfind("cuda", 0) != 0) {
      KILN_GPU_SKIP("no NVDEC for this video: " << reader.value()->info().decode);
    }
    held.push_back(std::move(frame));
    if (held.size() > kHeld) {
      ASSERT_NO_FATAL_FAILURE(convert_oldest());
    }
  }
  while (!held.empty()) ASSERT_NO_FATAL_FAILURE(convert_oldest());
  EXPECT_EQ(converted, software.size());
}

TEST_F(NvdecDeviceFrames, TheCpuReferenceOfTheDecodersPlanesIsWithinTheSameTolerance) {
  // The same check on the CPU, on the decoder's own planes (ffmpeg writes them as NV12: interleaving, no
  // arithmetic), so the tolerance above is proven here, before any GPU runs it.
  const fs::path raw = m_dir / "planes.nv12";
  const std::string command = "ffmpeg -loglevel error -y -i '" + m_video + "' -f rawvideo -pix_fmt nv12 '" +
                              raw.string() + "'";
  if (std::system(command.c_str()) != 0) GTEST_SKIP() << "no ffmpeg program (Debian's ffmpeg package) to dump planes";
  std::string decode;
  const std::vector<VideoFrame> software = read_all(VideoReaderOptions{}, &decode);
  ASSERT_EQ(software.size(), static_cast<size_t>(kFrames));
  const size_t frame_bytes = 640u * 360 * 3 / 2;
  ASSERT_EQ(fs::file_size(raw), frame_bytes * kFrames);
  std::vector<uint8_t> planes(frame_bytes * kFrames);
  FILE* file = std::fopen(raw.c_str(), "rb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fread(planes.data(), 1, planes.size(), file), planes.size());
  std::fclose(file);
  auto cpu = cpu_backend_create();
  for (int i = 0; i < kFrames; ++i) {
    SCOPED_TRACE("frame " + std::to_string(i));
    const ImageView in = image_view_packed(planes.data() + frame_bytes * i, 640, 360 * 3 / 2, 1, PixelType::kU8,
                                           Layout::kHWC);
    std::vector<uint8_t> rgb(640u * 360 * 3);
    const ImageView out = image_view_packed(rgb.data(), 640, 360, 3, PixelType::kU8, Layout::kHWC);
    ColorParams params;
    params.conversion = ColorConversion::kNv12ToRgb;
    params.yuv_matrix = YuvMatrix::kBt601;  // the file is untagged: swscale's default, as device_frame_wrap takes it
    ASSERT_TRUE(cpu->run(OpCall{OpKind::kColor, &params, VarShapeBatchView{&in, 1}, VarShapeBatchView{&out, 1},
                                nullptr},
                         {})
                    .is_ok());
    expect_near_software(rgb, software[static_cast<size_t>(i)].rgb.pixels);
  }
}

}  // namespace
}  // namespace kiln
