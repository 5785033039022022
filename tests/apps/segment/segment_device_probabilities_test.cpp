// The segment job with the model's outputs left on the device (InferSession::run_to_device): each frame's output
// becomes its smoothed person probability there (the probability op into the stream's map), the matte is made from
// that map there, and only the frame-size mask comes down. Against the CPU provider's run: the same masks (IoU), with
// the largest-component filter too (the map comes down for it). A failed step on the device brings the stream's map
// to the host with the reason (mode auto: the same masks) or stops the job (mode gpu). Mask outputs encoded by NVENC
// take the mask from the device straight into the encoder's device frames (where the GPU has NVENC). Every
// test here needs a CUDA device and ONNX Runtime's CUDA provider: SKIPPED here, failing under KILN_REQUIRE_GPU=1.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "common/person_video_on_cuda.h"
#include "core/fault.h"
#include "kiln/apps/segment.h"

namespace kiln {
namespace {

constexpr int kFrames = 24;

class SegmentDeviceProbabilities : public test::PersonVideoOnCuda {
 protected:
  SegmentDeviceProbabilities()
      : PersonVideoOnCuda("segment_device_probabilities", kFrames, "outputs left on the device need one") {}

  // Lossless masks from the software decode (NVDEC is another test's subject).
  SegmentJobConfig config(const std::string& output, ExecMode mode, bool largest_component) {
    SegmentJobConfig c;
    c.output_dir = (m_dir / output).string();
    c.output = SegmentOutput::kMask;
    c.codec = "ffv1";
    c.exec.mode = mode;
    c.exec.threads = 2;
    c.hw_decode = "none";
    c.segment.largest_component = largest_component;
    return c;
  }

  // The mean IoU of two mask videos' frames (> 127 is the person); fails when their frame counts differ.
  static double masks_iou(const std::string& a, const std::string& b) {
    const std::vector<ImageBuffer> fa = test::video_frames_read(a), fb = test::video_frames_read(b);
    EXPECT_EQ(fa.size(), fb.size());
    EXPECT_EQ(fa.size(), static_cast<size_t>(kFrames));
    if (fa.empty() || fa.size() != fb.size()) return 0;
    double sum = 0;
    for (size_t i = 0; i < fa.size(); ++i) {
      EXPECT_EQ(fa[i].pixels.size(), fb[i].pixels.size());
      int64_t both = 0, either = 0;
      for (size_t k = 0; k < std::min(fa[i].pixels.size(), fb[i].pixels.size()); ++k) {
        const bool x = fa[i].pixels[k] > 127, y = fb[i].pixels[k] > 127;
        both += x && y ? 1 : 0;
        either += x || y ? 1 : 0;
      }
      sum += either == 0 ? 1.0 : static_cast<double>(both) / static_cast<double>(either);
    }
    return sum / static_cast<double>(fa.size());
  }

  // Person pixels in the last frame of a mask video: a filter that removed the person would leave none.
  static double person_share(const std::string& path) {
    const std::vector<ImageBuffer> frames = test::video_frames_read(path);
    if (frames.empty()) return 0;
    int64_t on = 0;
    for (const uint8_t v : frames.back().pixels) on += v > 127 ? 1 : 0;
    return static_cast<double>(on) / static_cast<double>(frames.back().pixels.size());
  }

  std::string out(const std::string& name) const { return (m_dir / name).string(); }

};

TEST_F(SegmentDeviceProbabilities, MasksFromMapsSmoothedOnTheDeviceAreTheCpuRunsMasks) {
  for (const bool largest : {false, true}) {
    SCOPED_TRACE(largest ? "largest_component" : "every region");
    const std::string tag = largest ? "_largest" : "";
    auto cpu = segment_job_run(config("cpu" + tag + ".mkv", ExecMode::kCpu, largest), {m_video});
    ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
    EXPECT_EQ(cpu.value().probabilities, "host");
    auto gpu = segment_job_run(config("gpu" + tag + ".mkv", ExecMode::kGpu, largest), {m_video});
    ASSERT_TRUE(gpu.is_ok()) << gpu.status().to_string();
    const SegmentJobSummary& s = gpu.value();
    EXPECT_EQ(s.infer.provider, "cuda");
    EXPECT_EQ(s.matte, "cuda");
    // The first batch of the input size runs on the host (it teaches the session the outputs' shapes); the rest
    // leave their outputs on the device.
    EXPECT_EQ(s.probabilities.rfind("device (", 0), 0u) << s.probabilities;
    EXPECT_EQ(s.probabilities.find("then host"), std::string::npos) << s.probabilities;
    EXPECT_EQ(s.streams[0].written, kFrames);
    // The provider convolves in TF32 and batches by timing: probabilities near the threshold move, at the edge only.
    EXPECT_GE(masks_iou(out("cpu" + tag + ".mkv"), out("gpu" + tag + ".mkv")), 0.97);
    EXPECT_GT(person_share(out("gpu" + tag + ".mkv")), 0.05);
  }
}

// An H.264 mask output with --hw-encode auto: on a GPU with NVENC each frame whose map is on the device has its mask
// written into the encoder's CUDA frame and is encoded from there (nothing comes down); without NVENC (the H100 and
// H200 have none) libx264 encodes the masks from the host. The same masks either way.
TEST_F(SegmentDeviceProbabilities, MasksEncodedByNvencFromDeviceMemoryAreTheCpuRunsMasks) {
  auto cpu = segment_job_run(config("cpu.mkv", ExecMode::kCpu, false), {m_video});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  SegmentJobConfig c = config("gpu.mp4", ExecMode::kGpu, false);
  c.codec.clear();
  c.hw_encode = "auto";
  auto gpu = segment_job_run(c, {m_video});
  ASSERT_TRUE(gpu.is_ok()) << gpu.status().to_string();
  const SegmentStreamSummary& stream = gpu.value().streams[0];
  EXPECT_EQ(stream.written, kFrames);
  EXPECT_GE(masks_iou(out("cpu.mkv"), out("gpu.mp4")), 0.97) << stream.encode;
  if (stream.encode.find("h264_nvenc") == std::string::npos) GTEST_SKIP() << "this GPU has no NVENC: " << stream.encode;
  EXPECT_NE(stream.encode.find("(h264_nvenc, nv12 in device memory)"), std::string::npos) << stream.encode;
  // The first batch's maps are made on the host (its outputs teach the session their shapes): at most 8 frames.
  const size_t at = stream.encode.find(" of " + std::to_string(kFrames) + " frames from device memory");
  ASSERT_NE(at, std::string::npos) << stream.encode;
  const int device_frames = std::stoi(stream.encode.substr(stream.encode.rfind(", ", at) + 2));
  EXPECT_GE(device_frames, kFrames - 8) << stream.encode;
  EXPECT_EQ(stream.encode.find("host frames from then on"), std::string::npos) << stream.encode;
}

// A failed step on the device (KILN_FAULT=device_map:N: the third frame's) brings the stream's map to the host with
// the reason in mode auto, the masks unchanged; in mode gpu it stops the job.
TEST_F(SegmentDeviceProbabilities, AFailedDeviceStepMovesTheMapToTheHostOrStopsModeGpu) {
  auto cpu = segment_job_run(config("cpu.mkv", ExecMode::kCpu, false), {m_video});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  ASSERT_TRUE(fault_configure("device_map:3").is_ok());
  auto moved = segment_job_run(config("auto.mkv", ExecMode::kAuto, false), {m_video});
  ASSERT_TRUE(fault_configure("device_map:3").is_ok());
  auto stopped = segment_job_run(config("gpu.mkv", ExecMode::kGpu, false), {m_video});
  ASSERT_TRUE(fault_configure("").is_ok());

  ASSERT_TRUE(moved.is_ok()) << moved.status().to_string();
  const SegmentJobSummary& s = moved.value();
  EXPECT_EQ(s.infer.provider, "cuda");
  EXPECT_EQ(s.probabilities.rfind("device (2 frames), then host (smoothing on the device: injected", 0), 0u)
      << s.probabilities;
  EXPECT_EQ(s.streams[0].written, kFrames);
  EXPECT_GE(masks_iou(out("cpu.mkv"), out("auto.mkv")), 0.97);

  ASSERT_FALSE(stopped.is_ok()) << "mode gpu does not fall back";
  EXPECT_NE(stopped.status().message().find("injected failure of the probability map"), std::string::npos)
      << stopped.status().to_string();
}

}  // namespace
}  // namespace kiln
