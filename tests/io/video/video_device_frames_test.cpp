// VideoWriterOptions::device_frames: NVENC reading masks from device memory (kiln segment's mask outputs on a GPU).
// Here (no GPU) the writer says why it has none and takes host frames as before; on a GPU with NVENC, frames filled
// on the device and host frames mix in one file, which decodes to the masks. (The H100 and H200 have no NVENC: there
// the NVENC test skips with the reason even under KILN_REQUIRE_GPU=1, as the other NVENC test does.)
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <vector>

#include "common/gpu_required.h"
#include "io/video/device_frame.h"
#include "io/video/ffmpeg_util.h"
#include "io/video/video_reader.h"
#include "io/video/video_writer.h"
#include "kiln/device.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr int32_t kMaskWidth = 320, kMaskHeight = 240, kMaskFrames = 12;

// A person-like blob that moves: 255 inside, 0 outside.
ImageBuffer mask_frame(int index) {
  ImageBuffer img;
  img.width = kMaskWidth;
  img.height = kMaskHeight;
  img.channels = 1;
  img.pixels.resize(static_cast<size_t>(kMaskWidth) * kMaskHeight);
  for (int32_t y = 0; y < kMaskHeight; ++y) {
    for (int32_t x = 0; x < kMaskWidth; ++x) {
      const bool in = x >= 40 + 8 * index && x < 140 + 8 * index && y >= 30 && y < 220;
      img.pixels[static_cast<size_t>(y) * kMaskWidth + x] = in ? 255 : 0;
    }
  }
  return img;
}

fs::path device_frames_path(const char* name) {
  const fs::path dir = fs::temp_directory_path() / ("kiln_device_frames_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

VideoWriterOptions mask_options() {
  VideoWriterOptions o;
  o.width = kMaskWidth;
  o.height = kMaskHeight;
  o.pixels = VideoPixels::kGray;
  o.time_base = {1, 30};
  o.hw_encode = VideoHwEncode::kAuto;
  o.device_frames = true;
  return o;
}

// Every frame decoded, each within `tolerance` (mean absolute) of its mask.
void expect_masks(const fs::path& path, double tolerance) {
  auto reader = VideoReader::open(path.string());
  ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
  int frames = 0;
  for (;; ++frames) {
    VideoFrame f;
    bool end = false;
    ASSERT_TRUE(reader.value()->read(&f, &end).is_ok());
    if (end) break;
    const ImageBuffer want = mask_frame(frames);
    double sum = 0;
    for (size_t i = 0; i < want.pixels.size(); ++i) sum += std::abs(int(f.rgb.pixels[i * 3]) - int(want.pixels[i]));
    EXPECT_LT(sum / static_cast<double>(want.pixels.size()), tolerance) << "frame " << frames;
  }
  EXPECT_EQ(frames, kMaskFrames);
}

TEST(VideoDeviceFrames, WithoutNvencTheWriterSaysWhyAndTakesHostFrames) {
  const fs::path path = device_frames_path("host.mp4");
  auto writer = VideoWriter::open(path.string(), mask_options());
  ASSERT_TRUE(writer.is_ok()) << writer.status().to_string();
  if (writer.value()->description().find("h264_nvenc") != std::string::npos) {
    GTEST_SKIP() << "this machine has NVENC: VideoDeviceFrames.NvencEncodesMasksFilledOnTheDevice covers it";
  }
  const Result<VideoDeviceFrame> frame = writer.value()->device_frame();
  EXPECT_EQ(frame.status().code(), Errc::kNotImplemented);
  EXPECT_NE(frame.status().message().find("no device frames: the encoder is not NVENC"), std::string::npos)
      << frame.status().to_string();
  EXPECT_EQ(writer.value()->write_device(0).code(), Errc::kNotImplemented);
  for (int i = 0; i < kMaskFrames; ++i) ASSERT_TRUE(writer.value()->write(mask_frame(i).view(), i).is_ok());
  ASSERT_TRUE(writer.value()->finish().is_ok());
  EXPECT_EQ(writer.value()->description().find("device memory"), std::string::npos) << writer.value()->description();
  expect_masks(path, 2.0);

  VideoWriterOptions rgba = mask_options();
  rgba.pixels = VideoPixels::kRgba;
  const auto refused = VideoWriter::open(device_frames_path("rgba.mkv").string(), rgba);
  EXPECT_EQ(refused.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("device frames are gray or RGB"), std::string::npos);
  fs::remove_all(path.parent_path());
}

// RGB outputs (kiln segment's composites) may ask for device frames too; without NVENC they write as before.
TEST(VideoDeviceFrames, RgbWritersAskingForDeviceFramesWriteWithoutNvenc) {
  const fs::path path = device_frames_path("rgb.mp4");
  VideoWriterOptions o = mask_options();
  o.pixels = VideoPixels::kRgb;
  auto writer = VideoWriter::open(path.string(), o);
  ASSERT_TRUE(writer.is_ok()) << writer.status().to_string();
  if (writer.value()->description().find("h264_nvenc") != std::string::npos) GTEST_SKIP() << "NVENC here";
  EXPECT_EQ(writer.value()->device_frame().status().code(), Errc::kNotImplemented);
  ImageBuffer rgb;
  rgb.width = kMaskWidth;
  rgb.height = kMaskHeight;
  rgb.channels = 3;
  rgb.pixels.assign(static_cast<size_t>(kMaskWidth) * kMaskHeight * 3, 90);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(writer.value()->write(rgb.view(), i).is_ok());
  ASSERT_TRUE(writer.value()->finish().is_ok());
  auto reader = VideoReader::open(path.string());
  ASSERT_TRUE(reader.is_ok());
  int frames = 0;
  for (bool end = false; !end; ++frames) {
    VideoFrame f;
    ASSERT_TRUE(reader.value()->read(&f, &end).is_ok());
    if (end) break;
    EXPECT_NEAR(f.rgb.pixels[0], 90, 3);
  }
  EXPECT_EQ(frames, 3);
  fs::remove_all(path.parent_path());
}

// The matrix a device frame is converted with is the one swscale gives host frames of the same output, or there are
// no device frames (FCC, SMPTE 240M: kiln has no such matrix).
TEST(VideoDeviceFrames, TheirMatrixIsSwscalesForEveryColourSpace) {
  for (int32_t space = 0; space <= AVCOL_SPC_ICTCP; ++space) {
    const int sws = sws_colorspace(space);
    const YuvMatrix kiln = yuv_matrix_of(space);
    const bool same = (sws == SWS_CS_ITU709 && kiln == YuvMatrix::kBt709) ||
                      (sws == SWS_CS_BT2020 && kiln == YuvMatrix::kBt2020) ||
                      (sws == SWS_CS_DEFAULT && kiln == YuvMatrix::kBt601);
    EXPECT_EQ(yuv_matrix_is_swscales(space), same) << "colour space " << space;
  }
  EXPECT_FALSE(yuv_matrix_is_swscales(AVCOL_SPC_FCC));
  EXPECT_FALSE(yuv_matrix_is_swscales(AVCOL_SPC_SMPTE240M));
  EXPECT_TRUE(yuv_matrix_is_swscales(AVCOL_SPC_BT709));
  EXPECT_TRUE(yuv_matrix_is_swscales(AVCOL_SPC_UNSPECIFIED));
}

// Even frames filled on the device (the NV12 planes a mask takes, uploaded as kiln segment's matte kernel writes
// them), odd frames from the host: one file, every frame its mask.
// `codec`: "" (hw_encode auto: H.264) or a named NVENC encoder.
void masks_filled_on_the_device_check(const std::string& codec, const char* file) {
  Backend* cuda = BackendRegistry::instance().find(BackendKind::kCuda);
  if (cuda == nullptr) KILN_GPU_SKIP("no CUDA device here: NVENC's device frames need one");
  const fs::path path = device_frames_path(file);
  VideoWriterOptions options = mask_options();
  options.codec = codec;
  auto writer = VideoWriter::open(path.string(), options);
  if (!writer.is_ok() && !codec.empty()) {  // a named encoder insists: no NVENC is an error, not a fallback
    EXPECT_NE(writer.status().message().find(codec + " asked for, but "), std::string::npos)
        << writer.status().to_string();
    GTEST_SKIP() << "this GPU has no NVENC: " << writer.status().to_string();
  }
  ASSERT_TRUE(writer.is_ok()) << writer.status().to_string();
  const std::string opened = writer.value()->description();
  const std::string encoder = codec.empty() ? "h264_nvenc" : codec;
  if (opened.find(encoder) == std::string::npos) GTEST_SKIP() << "this GPU has no NVENC: " << opened;
  EXPECT_NE(opened.find("(" + encoder + ", nv12 in device memory)"), std::string::npos) << opened;
  for (int i = 0; i < kMaskFrames; ++i) {
    const ImageBuffer mask = mask_frame(i);
    if (i % 2 == 1) {
      ASSERT_TRUE(writer.value()->write(mask.view(), i).is_ok());
      continue;
    }
    Result<VideoDeviceFrame> frame = writer.value()->device_frame();
    ASSERT_TRUE(frame.is_ok()) << frame.status().to_string();
    const VideoDeviceFrame& f = frame.value();
    ASSERT_EQ(f.chroma_row, kMaskHeight);
    ASSERT_EQ(f.nv12.height, kMaskHeight + kMaskHeight / 2);
    std::vector<uint8_t> nv12(static_cast<size_t>(kMaskWidth) * f.nv12.height);
    for (size_t p = 0; p < mask.pixels.size(); ++p) nv12[p] = mask.pixels[p] != 0 ? f.white : f.black;
    for (size_t p = mask.pixels.size(); p < nv12.size(); p += 2) {
      nv12[p] = f.u;
      nv12[p + 1] = f.v;
    }
    const VarShapeBatch host =
        VarShapeBatch::wrap({image_view_packed(nv12.data(), kMaskWidth, f.nv12.height, 1, PixelType::kU8)});
    const VarShapeBatch device = VarShapeBatch::wrap({f.nv12}, MemorySpace::kDevice);
    ASSERT_TRUE(cuda->images_upload(host.view(), device.view()).is_ok());
    ASSERT_TRUE(writer.value()->write_device(i).is_ok());
  }
  ASSERT_TRUE(writer.value()->finish().is_ok());
  EXPECT_NE(writer.value()->description().find(std::to_string(kMaskFrames / 2) + " of " + std::to_string(kMaskFrames) +
                                               " frames from device memory"),
            std::string::npos)
      << writer.value()->description();
  expect_masks(path, 3.0);
  fs::remove_all(path.parent_path());
}

TEST(VideoDeviceFrames, NvencEncodesMasksFilledOnTheDevice) {
  masks_filled_on_the_device_check("", "device.mp4");
}

TEST(VideoDeviceFrames, HevcNvencNamedEncodesMasksFilledOnTheDevice) {
  masks_filled_on_the_device_check("hevc_nvenc", "device_hevc.mp4");
}

}  // namespace
}  // namespace kiln
