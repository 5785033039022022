// VideoWriter -> VideoReader round trips through real FFmpeg codecs (H.264, VP9), timestamps kept exactly, and
// damaged files: a truncated Matroska file yields its decodable frames, a truncated MP4 a clear error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/gpu_required.h"
#include "core/fault.h"
#include "io/video/ffmpeg_util.h"
#include "io/video/video_reader.h"
#include "io/video/video_writer.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr int kWidth = 320;
constexpr int kHeight = 240;
constexpr int kFrames = 30;
constexpr int64_t kTicksPerFrame = 512;  // time base 1/15360 at 30 fps: MP4's usual clock

// A gradient with a bright square that moves 6 px per frame: smooth enough for a lossy codec to keep closely.
ImageBuffer test_frame(int index, int channels = 3) {
  ImageBuffer img;
  img.width = kWidth;
  img.height = kHeight;
  img.channels = channels;
  img.pixels.resize(static_cast<size_t>(kWidth) * kHeight * channels);
  for (int y = 0; y < kHeight; ++y) {
    for (int x = 0; x < kWidth; ++x) {
      const bool square = x >= 20 + 6 * index && x < 80 + 6 * index && y >= 90 && y < 150;
      uint8_t* p = &img.pixels[(static_cast<size_t>(y) * kWidth + x) * channels];
      p[0] = square ? 230 : static_cast<uint8_t>(x * 200 / kWidth);
      if (channels >= 3) {
        p[1] = square ? 60 : static_cast<uint8_t>(y * 200 / kHeight);
        p[2] = square ? 40 : 120;
      }
      if (channels == 4) p[3] = square ? 255 : 0;
    }
  }
  return img;
}

fs::path temp_dir() {
  fs::path dir = fs::temp_directory_path() / ("kiln_video_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

VideoWriterOptions writer_options(VideoPixels pixels = VideoPixels::kRgb) {
  VideoWriterOptions o;
  o.width = kWidth;
  o.height = kHeight;
  o.pixels = pixels;
  o.time_base = {1, 15360};
  o.frame_rate = {30, 1};
  return o;
}

// `description`: the writer's, when asked for.
void write_video(const std::string& path, int frames = kFrames, VideoPixels pixels = VideoPixels::kRgb,
                 VideoHwEncode hw_encode = VideoHwEncode::kNone, std::string* description = nullptr) {
  VideoWriterOptions o = writer_options(pixels);
  o.hw_encode = hw_encode;
  auto writer = VideoWriter::open(path, o);
  ASSERT_TRUE(writer.is_ok()) << writer.status().to_string();
  if (description != nullptr) *description = writer.value()->description();
  for (int i = 0; i < frames; ++i) {
    const ImageBuffer img = test_frame(i, pixels == VideoPixels::kRgba ? 4 : 3);
    ASSERT_TRUE(writer.value()->write(img.view(), i * kTicksPerFrame).is_ok());
  }
  Status st = writer.value()->finish();
  ASSERT_TRUE(st.is_ok()) << st.to_string();
}

std::vector<VideoFrame> read_all(VideoReader& reader) {
  std::vector<VideoFrame> frames;
  for (;;) {
    VideoFrame f;
    bool end = false;
    Status st = reader.read(&f, &end);
    EXPECT_TRUE(st.is_ok()) << st.to_string();
    if (end || !st.is_ok()) break;
    frames.push_back(std::move(f));
  }
  return frames;
}

double mean_abs_diff(const ImageBuffer& a, const ImageBuffer& b) {
  double sum = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) sum += std::abs(int(a.pixels[i]) - int(b.pixels[i]));
  return sum / static_cast<double>(a.pixels.size());
}

void truncate_file(const fs::path& path, double keep) {
  const auto size = fs::file_size(path);
  fs::resize_file(path, static_cast<uintmax_t>(static_cast<double>(size) * keep));
}

TEST(VideoIo, H264RoundTripKeepsFramesTimestampsAndPixels) {
  const fs::path path = temp_dir() / "round.mp4";
  write_video(path.string());
  auto reader = VideoReader::open(path.string());
  ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
  const VideoInfo& info = reader.value()->info();
  EXPECT_EQ(info.codec, "h264");
  EXPECT_EQ(info.width, kWidth);
  EXPECT_EQ(info.height, kHeight);
  EXPECT_NEAR(info.frame_rate.value(), 30.0, 1e-6);
  EXPECT_EQ(info.frames, kFrames);
  EXPECT_FALSE(info.frames_estimated);  // MP4 declares its frame count
  const auto frames = read_all(*reader.value());
  ASSERT_EQ(frames.size(), static_cast<size_t>(kFrames));
  for (int i = 0; i < kFrames; ++i) {
    EXPECT_NEAR(frames[i].time_s, i / 30.0, 1e-6) << i;
    EXPECT_EQ(frames[i].index, i);
    // yuv420p chroma subsampling and CRF 20 leave a small difference; a wrong frame order or a colour swap would
    // be far larger (the square moves 6 px a frame).
    EXPECT_LT(mean_abs_diff(frames[i].rgb, test_frame(i)), 4.0) << i;
  }
  EXPECT_EQ(reader.value()->error_count(), 0);
  fs::remove_all(path.parent_path());
}

TEST(VideoIo, Vp9WithAlphaInWebm) {
  const fs::path path = temp_dir() / "alpha.webm";
  write_video(path.string(), 10, VideoPixels::kRgba);
  auto reader = VideoReader::open(path.string());
  ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
  EXPECT_EQ(reader.value()->info().codec, "vp9");
  // WebM declares no frame count: the duration x rate stands for it, and says so.
  EXPECT_TRUE(reader.value()->info().frames_estimated);
  EXPECT_EQ(reader.value()->info().frames, 10);
  EXPECT_EQ(read_all(*reader.value()).size(), 10u);
  fs::remove_all(path.parent_path());
}

TEST(VideoIo, AlphaInMp4IsRefusedWithTheFix) {
  VideoWriterOptions o;
  o.width = kWidth;
  o.height = kHeight;
  o.pixels = VideoPixels::kRgba;
  auto writer = VideoWriter::open((temp_dir() / "a.mp4").string(), o);
  ASSERT_FALSE(writer.is_ok());
  EXPECT_EQ(writer.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(writer.status().message().find(".webm"), std::string::npos) << writer.status().message();
}

TEST(VideoIo, UnfinishedWriterLeavesNothing) {
  const fs::path dir = temp_dir() / "unfinished";
  fs::create_directories(dir);
  {
    VideoWriterOptions o;
    o.width = kWidth;
    o.height = kHeight;
    auto writer = VideoWriter::open((dir / "x.mp4").string(), o);
    ASSERT_TRUE(writer.is_ok());
    const ImageBuffer img = test_frame(0);
    ASSERT_TRUE(writer.value()->write(img.view(), 0).is_ok());
  }
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST(VideoIo, TruncatedMatroskaYieldsItsDecodableFrames) {
  const fs::path path = temp_dir() / "cut.mkv";
  write_video(path.string());
  truncate_file(path, 0.6);
  auto reader = VideoReader::open(path.string());
  ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
  const auto frames = read_all(*reader.value());
  EXPECT_GT(frames.size(), 5u);
  EXPECT_LT(frames.size(), static_cast<size_t>(kFrames));
  for (size_t i = 0; i < frames.size(); ++i) EXPECT_LT(mean_abs_diff(frames[i].rgb, test_frame(int(i))), 4.0) << i;
  ASSERT_FALSE(reader.value()->errors().empty());
  EXPECT_NE(reader.value()->errors().back().find("ends early"), std::string::npos) << reader.value()->errors().back();
  fs::remove_all(path.parent_path());
}

// MPEG-TS is built to resynchronise (188-byte packets with a sync byte), so a damaged stretch costs only the
// frames inside it; Matroska or MP4 damage can lose the rest of a cluster, as the ffmpeg tool does too.
TEST(VideoIo, CorruptBytesInTheMiddleDoNotStopTheRead) {
  const fs::path path = temp_dir() / "noise.ts";
  write_video(path.string());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    const auto size = static_cast<std::streamoff>(fs::file_size(path));
    f.seekp(size / 2);
    std::string noise(2000, '\0');
    for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 7919 + 13) & 0xff);
    f.write(noise.data(), static_cast<std::streamsize>(noise.size()));
  }
  auto reader = VideoReader::open(path.string());
  ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
  const auto frames = read_all(*reader.value());
  EXPECT_GT(frames.size(), static_cast<size_t>(kFrames / 2));
  EXPECT_GT(reader.value()->error_count(), 0);
  for (const std::string& e : reader.value()->errors()) std::printf("  reported: %s\n", e.c_str());
  fs::remove_all(path.parent_path());
}

TEST(VideoIo, TruncatedMp4AndNonVideoGiveClearErrors) {
  const fs::path dir = temp_dir();
  const fs::path mp4 = dir / "cut.mp4";
  write_video(mp4.string());
  truncate_file(mp4, 0.5);  // the index (moov) is at the end: nothing can be located
  auto reader = VideoReader::open(mp4.string());
  ASSERT_FALSE(reader.is_ok());
  EXPECT_NE(reader.status().message().find(mp4.string()), std::string::npos);

  const fs::path text = dir / "notes.mp4";
  std::ofstream(text) << "not a video at all\n";
  reader = VideoReader::open(text.string());
  ASSERT_FALSE(reader.is_ok());
  EXPECT_NE(reader.status().message().find("notes.mp4"), std::string::npos);

  reader = VideoReader::open((dir / "missing.mp4").string());
  ASSERT_FALSE(reader.is_ok());
  EXPECT_EQ(reader.status().code(), Errc::kIoError);
  fs::remove_all(dir);
}

TEST(VideoIo, CaptureDevicesLoadLibavdeviceOnlyWhenOneIsOpened) {
  // kiln does not link libavdevice (its 80 libraries would load at every start); opening /dev/video* loads it and
  // registers video4linux2, so an absent device is FFmpeg's error about that device, not a missing input format.
  auto loaded = [] {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
      if (line.find("libavdevice.so") != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_FALSE(loaded()) << "libavdevice was loaded at start";
  auto reader = VideoReader::open("/dev/video-kiln-absent");
  ASSERT_FALSE(reader.is_ok());
  EXPECT_EQ(reader.status().code(), Errc::kIoError);
  EXPECT_NE(reader.status().message().find("/dev/video-kiln-absent: cannot open as a video"), std::string::npos)
      << reader.status().message();
  EXPECT_TRUE(loaded()) << "opening a capture device did not load libavdevice";
}

TEST(VideoIo, HardwareDecodeFallsBackWithAReason) {
  const fs::path path = temp_dir() / "hw.mp4";
  write_video(path.string(), 3);
  VideoReaderOptions o;
  o.hw_decode = VideoHwDecode::kAuto;
  auto reader = VideoReader::open(path.string(), o);
  ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
  EXPECT_EQ(read_all(*reader.value()).size(), 3u);
  // Read after the frames: FFmpeg starts NVDEC at the first packet, and the reader says whether it did.
  const std::string& decode = reader.value()->info().decode;
  if (test::gpu_required()) {
    EXPECT_EQ(decode.rfind("cuda", 0), 0u) << "KILN_REQUIRE_GPU=1: no NVDEC: " << decode;
  }
  if (decode.rfind("cuda", 0) != 0) {
    EXPECT_NE(decode.find("software decode:"), std::string::npos) << decode;  // the reason is named
  }
  fs::remove_all(path.parent_path());
}

// Switches fault injection off when the test ends, however it ends.
struct FaultsOff {
  ~FaultsOff() { (void)fault_configure(""); }
};

// Overwrites 400 bytes of a small MP4 written by write_video where its first frames' packets lie.
void early_packets_damage(const fs::path& path) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(1500);
  const std::string noise(400, '\x5a');
  file.write(noise.data(), static_cast<std::streamsize>(noise.size()));
}

// NVDEC set up for a stream it then cannot decode (injected: FFmpeg goes on in software on the one thread NVDEC was
// given, which happens for real to a stream NVDEC lacks the profile for): the reader starts over with a software
// decoder on every thread, sending it the packets it kept, and gives exactly the software decode's frames and packet
// complaints, none twice or missing. A clip shorter than the decoder's delay (all its packets read before the first
// frame), a longer one with a packet the first decoder answers "full", and one damaged in its first frames.
TEST(VideoIo, WhereNvdecCannotStartTheSoftwareDecodeStartsOverOnEveryThread) {
  const FaultsOff faults_off;
  const fs::path path = temp_dir() / "refused.mp4";
  struct Case {
    int frames;
    const char* faults;
    bool damaged;
  };
  const auto packet_errors = [](const std::vector<std::string>& errors) {
    std::vector<std::string> out;
    for (const std::string& e : errors) {
      if (e.rfind("packet ", 0) == 0) out.push_back(e);
    }
    return out;
  };
  for (const Case& c : {Case{3, "nvdec_refused:1", false}, Case{40, "nvdec_refused:1,decoder_full:3", false},
                        Case{40, "nvdec_refused:1", true}}) {
    write_video(path.string(), c.frames);
    if (c.damaged) early_packets_damage(path);
    VideoReaderOptions o;
    o.threads = 3;
    auto plain = VideoReader::open(path.string(), o);
    ASSERT_TRUE(plain.is_ok()) << plain.status().to_string();
    const std::vector<VideoFrame> expected = read_all(*plain.value());
    if (c.damaged) {
      ASSERT_GT(plain.value()->error_count(), 0) << "the damage went unnoticed";
      ASSERT_FALSE(packet_errors(plain.value()->errors()).empty()) << "no packet was refused";
    } else {
      ASSERT_EQ(expected.size(), static_cast<size_t>(c.frames));
    }

    ASSERT_TRUE(fault_configure(c.faults).is_ok());
    o.hw_decode = VideoHwDecode::kAuto;
    auto reader = VideoReader::open(path.string(), o);
    ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
    const std::vector<VideoFrame> got = read_all(*reader.value());
    ASSERT_TRUE(fault_configure("").is_ok());
    ASSERT_EQ(got.size(), expected.size()) << c.frames << " frames";
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].index, static_cast<int64_t>(i));
      EXPECT_EQ(got[i].pts, expected[i].pts) << i;
      EXPECT_EQ(got[i].rgb.pixels, expected[i].rgb.pixels) << "frame " << i << " of " << c.frames;
    }
    // The packets' complaints are the plain decode's, each once. (Whether frame threads flag a frame decoded from
    // damaged data as such varies from run to run, so those notes are not compared.)
    EXPECT_EQ(packet_errors(reader.value()->errors()), packet_errors(plain.value()->errors()));
    if (!c.damaged) {
      EXPECT_EQ(reader.value()->error_count(), 0);
    }
    const std::string& decode = reader.value()->info().decode;
    EXPECT_EQ(decode.rfind("software (3 threads); software decode: NVDEC could not start for this stream (h264 ", 0),
              0u) << decode;
  }
  fs::remove_all(path.parent_path());
}

// With one decode thread asked for there is nothing to start over for: the first decoder goes on, and its frames
// and complaints are the plain decode's, none sent or counted twice.
TEST(VideoIo, WhereNvdecCannotStartOnOneThreadTheFirstDecoderGoesOn) {
  const FaultsOff faults_off;
  const fs::path path = temp_dir() / "one_thread.mp4";
  write_video(path.string(), 20);
  early_packets_damage(path);
  VideoReaderOptions o;
  o.threads = 1;
  auto plain = VideoReader::open(path.string(), o);
  ASSERT_TRUE(plain.is_ok()) << plain.status().to_string();
  const std::vector<VideoFrame> expected = read_all(*plain.value());
  ASSERT_GT(plain.value()->error_count(), 0) << "the damage went unnoticed";
  ASSERT_TRUE(fault_configure("nvdec_refused:1").is_ok());
  o.hw_decode = VideoHwDecode::kAuto;
  auto reader = VideoReader::open(path.string(), o);
  ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
  const std::vector<VideoFrame> got = read_all(*reader.value());
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].pts, expected[i].pts) << i;
    EXPECT_EQ(got[i].rgb.pixels, expected[i].rgb.pixels) << i;
  }
  EXPECT_EQ(reader.value()->errors(), plain.value()->errors());
  EXPECT_EQ(reader.value()->error_count(), plain.value()->error_count());
  EXPECT_EQ(reader.value()->info().decode.rfind("software (1 threads)", 0), 0u) << reader.value()->info().decode;
  fs::remove_all(path.parent_path());
}

// A real stream of a profile NVDEC lacks on many GPUs (H.264 High 4:4:4): with --hw-decode auto every frame comes out,
// the software decode's exactly when NVDEC did not start (then on every thread), close to them when it did. Here it
// decodes in software (no CUDA); on the GPU machine the test's output says which happened.
TEST(VideoIo, AStreamNvdecMayLackIsDecodedInFullEitherWay) {
  const fs::path dir = temp_dir();
  const std::string path = (dir / "444.mp4").string();
  const std::string command = "ffmpeg -loglevel error -y -f lavfi -i testsrc2=size=320x240:rate=30 -frames:v 24 "
                              "-pix_fmt yuv444p -c:v libx264 -profile:v high444 '" + path + "'";
  if (std::system(command.c_str()) != 0) GTEST_SKIP() << "no ffmpeg program (Debian's ffmpeg package) to write it";
  VideoReaderOptions o;
  o.threads = 2;
  auto plain = VideoReader::open(path, o);
  ASSERT_TRUE(plain.is_ok()) << plain.status().to_string();
  const std::vector<VideoFrame> expected = read_all(*plain.value());
  ASSERT_EQ(expected.size(), 24u);
  o.hw_decode = VideoHwDecode::kAuto;
  auto reader = VideoReader::open(path, o);
  ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
  const std::vector<VideoFrame> got = read_all(*reader.value());
  const std::string& decode = reader.value()->info().decode;
  std::cout << "H.264 4:4:4 with --hw-decode auto: " << decode << "\n";
  ASSERT_EQ(got.size(), expected.size()) << decode;
  const bool software = decode.rfind("software (2 threads)", 0) == 0;
  EXPECT_TRUE(software || decode.rfind("cuda (NVDEC)", 0) == 0) << decode;
  for (size_t i = 0; i < got.size(); ++i) {
    if (software) {
      EXPECT_EQ(got[i].rgb.pixels, expected[i].rgb.pixels) << i;
    } else {
      EXPECT_LT(mean_abs_diff(got[i].rgb, expected[i].rgb), 2.0) << i;
    }
  }
  fs::remove_all(dir);
}

// The colour description travels: frames are encoded with the given colour space's matrix and range and the file is
// tagged with it, so reading it back (by its tags) gives the frame's colours; a wrong matrix would move the saturated
// square by several levels.
TEST(VideoIo, ColourSpaceAndRangeAreEncodedAndTagged) {
  const fs::path path = temp_dir() / "colour.mp4";
  const VideoColour hd{AVCOL_SPC_BT709, AVCOL_RANGE_MPEG, AVCOL_PRI_BT709, AVCOL_TRC_BT709};
  const VideoColour full{AVCOL_SPC_BT709, AVCOL_RANGE_JPEG, AVCOL_PRI_BT709, AVCOL_TRC_BT709};
  for (const VideoColour& colour : {hd, full}) {
    VideoWriterOptions o = writer_options();
    o.colour = colour;
    auto writer = VideoWriter::open(path.string(), o);
    ASSERT_TRUE(writer.is_ok()) << writer.status().to_string();
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(writer.value()->write(test_frame(i).view(), i * kTicksPerFrame).is_ok());
    ASSERT_TRUE(writer.value()->finish().is_ok());
    auto reader = VideoReader::open(path.string());
    ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
    const VideoColour& got = reader.value()->info().colour;
    EXPECT_EQ(got.space, AVCOL_SPC_BT709);
    EXPECT_EQ(got.range, colour.range);
    EXPECT_EQ(got.primaries, AVCOL_PRI_BT709);
    EXPECT_EQ(got.transfer, AVCOL_TRC_BT709);
    const auto frames = read_all(*reader.value());
    ASSERT_EQ(frames.size(), 5u);
    for (int i = 0; i < 5; ++i) {
      EXPECT_LT(mean_abs_diff(frames[i].rgb, test_frame(i)), 4.0) << i;
      const uint8_t* p = &frames[i].rgb.pixels[(static_cast<size_t>(120) * kWidth + 50 + 6 * i) * 3];  // the square
      EXPECT_NEAR(p[0], 230, 6) << i;
      EXPECT_NEAR(p[1], 60, 6) << i;
      EXPECT_NEAR(p[2], 40, 6) << i;
    }
  }
  fs::remove_all(path.parent_path());
}

// A decoder that cannot take a packet yet (EAGAIN: its frames first) gets the same packet again after they are
// taken: every frame comes out, none lost (the reader used to drop that packet).
TEST(VideoIo, PacketRefusedAsFullIsSentAgain) {
  const fs::path path = temp_dir() / "full.mp4";
  write_video(path.string());
  for (int at : {1, 4, 17}) {
    ASSERT_TRUE(fault_configure("decoder_full:" + std::to_string(at)).is_ok());
    auto reader = VideoReader::open(path.string());
    ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
    const auto frames = read_all(*reader.value());
    ASSERT_EQ(frames.size(), static_cast<size_t>(kFrames)) << "packet " << at;
    for (int i = 0; i < kFrames; ++i) {
      EXPECT_NEAR(frames[i].time_s, i / 30.0, 1e-6) << "packet " << at << " frame " << i;
      EXPECT_LT(mean_abs_diff(frames[i].rgb, test_frame(i)), 4.0) << "packet " << at << " frame " << i;
    }
    EXPECT_EQ(reader.value()->error_count(), 0) << "packet " << at;
  }
  ASSERT_TRUE(fault_configure("").is_ok());
  fs::remove_all(path.parent_path());
}

// NVENC where the GPU has one (NVIDIA's support matrix lists none on the H100 and H200), else the container's software
// encoder with the reason in the description; either way a playable file with every frame and the same pictures.
TEST(VideoIo, HardwareEncodeFallsBackWithAReason) {
  const fs::path path = temp_dir() / "hw_encode.mp4";
  std::string description;
  ASSERT_NO_FATAL_FAILURE(write_video(path.string(), kFrames, VideoPixels::kRgb, VideoHwEncode::kAuto, &description));
  if (description.find("h264_nvenc") == std::string::npos) {
    EXPECT_NE(description.find("(libx264, yuv420p) in mp4; software encode: "), std::string::npos) << description;
    if (test::gpu_required()) {  // NVENC may be absent from the GPU, but the device itself must open
      EXPECT_EQ(description.find("no CUDA device"), std::string::npos) << "KILN_REQUIRE_GPU=1: " << description;
    }
  }
  auto reader = VideoReader::open(path.string());
  ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
  const auto frames = read_all(*reader.value());
  ASSERT_EQ(frames.size(), static_cast<size_t>(kFrames)) << description;
  for (int i = 0; i < kFrames; ++i) {
    EXPECT_NEAR(frames[i].time_s, i / 30.0, 1e-6) << i;
    EXPECT_LT(mean_abs_diff(frames[i].rgb, test_frame(i)), 5.0) << i << " " << description;
  }
  fs::remove_all(path.parent_path());
}

// Opens `o` at `path`, where NVENC is insisted on: either an UnsupportedFormat error containing `refused` and no file
// left behind (the test then skips, as on a machine without NVENC), or a writer described as `opened`, whose frames
// are written and read back as `codec`.
void nvenc_insisted_check(const VideoWriterOptions& o, const fs::path& path, const std::string& refused,
                          const std::string& opened, const std::string& codec) {
  auto writer = VideoWriter::open(path.string(), o);
  if (!writer.is_ok()) {
    EXPECT_EQ(writer.status().code(), Errc::kUnsupportedFormat);
    EXPECT_NE(writer.status().message().find(refused), std::string::npos) << writer.status().to_string();
    EXPECT_FALSE(fs::exists(path));
    fs::remove_all(path.parent_path());
    if (writer.status().message().find("no CUDA device") != std::string::npos) {
      KILN_GPU_SKIP("no CUDA device for NVENC: " << writer.status().message());
    }
    GTEST_SKIP() << "this GPU has no NVENC: " << writer.status().message();
  }
  EXPECT_NE(writer.value()->description().find(opened), std::string::npos) << writer.value()->description();
  for (int i = 0; i < kFrames; ++i) {
    ASSERT_TRUE(writer.value()->write(test_frame(i).view(), i * kTicksPerFrame).is_ok());
  }
  ASSERT_TRUE(writer.value()->finish().is_ok());
  auto reader = VideoReader::open(path.string());
  ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
  EXPECT_EQ(reader.value()->info().codec, codec);
  const auto frames = read_all(*reader.value());
  ASSERT_EQ(frames.size(), static_cast<size_t>(kFrames)) << opened;
  for (int i = 0; i < kFrames; ++i) EXPECT_LT(mean_abs_diff(frames[i].rgb, test_frame(i)), 5.0) << opened << " " << i;
  fs::remove_all(path.parent_path());
}

// A named NVENC encoder (h264_nvenc, hevc_nvenc) opens as --hw-encode cuda does: NVENC on the CUDA device, or an
// error naming the encoder and why, with no file left behind; never a quiet software encode.
TEST(VideoIo, NamedNvencEncodersOpenOnTheDeviceOrSayWhy) {
  VideoWriterOptions webm = writer_options();
  webm.codec = "hevc_nvenc";
  const auto refused = VideoWriter::open((temp_dir() / "hevc.webm").string(), webm);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), Errc::kInvalidArgument) << refused.status().to_string();
  EXPECT_NE(refused.status().message().find("a webm file cannot hold hevc"), std::string::npos)
      << refused.status().to_string();
  for (const std::string name : {"h264_nvenc", "hevc_nvenc"}) {
    VideoWriterOptions o = writer_options();
    o.codec = name;
    const std::string codec = name == "hevc_nvenc" ? "hevc" : "h264";
    ASSERT_NO_FATAL_FAILURE(nvenc_insisted_check(o, temp_dir() / (name + ".mkv"), name + " asked for, but ",
                                                 codec + " (" + name + ", yuv420p) in matroska", codec));
    if (testing::Test::IsSkipped()) return;
  }
}

// HEVC in MP4 is tagged hvc1, which Apple's players require (FFmpeg's own choice, hev1, they refuse).
TEST(VideoIo, HevcInMp4IsTaggedHvc1) {
  const fs::path path = temp_dir() / "hevc.mp4";
  VideoWriterOptions o = writer_options();
  o.codec = "libx265";
  auto writer = VideoWriter::open(path.string(), o);
  if (!writer.is_ok() && writer.status().code() == Errc::kUnsupportedFormat) {
    GTEST_SKIP() << "this FFmpeg build has no libx265: " << writer.status().to_string();
  }
  ASSERT_TRUE(writer.is_ok()) << writer.status().to_string();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(writer.value()->write(test_frame(i).view(), i * kTicksPerFrame).is_ok());
  ASSERT_TRUE(writer.value()->finish().is_ok());
  AVFormatContext* raw = nullptr;
  ASSERT_EQ(avformat_open_input(&raw, path.c_str(), nullptr, nullptr), 0);
  const AvInputPtr input(raw);
  ASSERT_GE(avformat_find_stream_info(raw, nullptr), 0);
  ASSERT_GE(raw->nb_streams, 1u);
  EXPECT_EQ(raw->streams[0]->codecpar->codec_id, AV_CODEC_ID_HEVC);
  EXPECT_EQ(raw->streams[0]->codecpar->codec_tag, MKTAG('h', 'v', 'c', '1'));
  fs::remove_all(path.parent_path());
}

// --hw-encode cuda: NVENC or a clear error naming why, and no file left behind.
TEST(VideoIo, HardwareEncodeCudaInsists) {
  VideoWriterOptions o = writer_options();
  o.hw_encode = VideoHwEncode::kCuda;
  o.low_latency = true;
  nvenc_insisted_check(o, temp_dir() / "nvenc.mp4", "hardware encode (cuda) asked for, but ",
                       "h264 (h264_nvenc, yuv420p) in mp4", "h264");
}

}  // namespace
}  // namespace kiln
