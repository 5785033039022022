// The segment job with NVDEC's frames left on the device (VideoReaderOptions::device_frames): for masks each frame's
// planes are copied there as they are read and the batch's preprocess samples them as NV12 (one kernel); for outputs
// that show the frames each is converted to RGB on the CUDA backend as it is read. The model reads them there, and a
// frame comes to the host only where the output shows its pixels (a composite or blurred background is blended on the
// device and comes down made, or goes to NVENC from there). Against the CPU's run on the software decode: the same masks (IoU) and the same composite pictures
// within the NV12 conversion's tolerance. A conversion that fails brings the frames to the host with the
// reason (mode auto) or stops the job (mode gpu). Every test here needs a CUDA device, ONNX Runtime's CUDA provider
// and NVDEC: SKIPPED here, failing under KILN_REQUIRE_GPU=1.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "common/person_video_on_cuda.h"
#include "core/fault.h"
#include "io/video/video_reader.h"
#include "kiln/apps/segment.h"

namespace kiln {
namespace {

constexpr int kFrames = 16;

class SegmentDeviceFrames : public test::PersonVideoOnCuda {
 protected:
  SegmentDeviceFrames() : PersonVideoOnCuda("segment_device_frames", kFrames, "NVDEC frames on the device need one") {}

  // Lossless output, so the comparisons see the pipeline's pixels and not an encoder's.
  SegmentJobConfig config(const std::string& output, SegmentOutput kind, ExecMode mode) {
    SegmentJobConfig c;
    c.output_dir = (m_dir / output).string();
    c.output = kind;
    c.codec = "ffv1";
    c.exec.mode = mode;
    c.exec.threads = 2;
    c.hw_decode = mode == ExecMode::kCpu ? "none" : "cuda";
    return c;
  }

  // The job on NVDEC, skipped where NVDEC cannot decode this video (a GPU without it).
  Result<SegmentJobSummary> run_on_nvdec(const SegmentJobConfig& c) {
    auto result = segment_job_run(c, {m_video});
    const std::string message = result.is_ok() ? std::string() : result.status().message();
    if (message.find("NVDEC") != std::string::npos || message.find("hwaccel") != std::string::npos) {
      m_nvdec_missing = result.status().to_string();
    }
    return result;
  }

  // Each frame of the composite video `got` within `mean_limit` levels (mean |difference|) of `want`'s, and at most
  // 5 % of its values more than 24 levels off.
  void expect_composites_close(const std::string& want_name, const std::string& got_name, double mean_limit) {
    const std::vector<ImageBuffer> want = test::video_frames_read((m_dir / want_name).string());
    const std::vector<ImageBuffer> got = test::video_frames_read((m_dir / got_name).string());
    ASSERT_EQ(got.size(), want.size());
    ASSERT_EQ(got.size(), static_cast<size_t>(kFrames));
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].pixels.size(), want[i].pixels.size());
      double sum = 0;
      size_t far = 0;
      for (size_t k = 0; k < got[i].pixels.size(); ++k) {
        const int d = std::abs(static_cast<int>(got[i].pixels[k]) - static_cast<int>(want[i].pixels[k]));
        sum += d;
        far += d > 24 ? 1 : 0;
      }
      const double n = static_cast<double>(got[i].pixels.size());
      EXPECT_LE(sum / n, mean_limit) << got_name << " frame " << i << ": mean |difference| from " << want_name;
      EXPECT_LE(static_cast<double>(far) / n, 0.05) << got_name << " frame " << i << ": values more than 24 off";
    }
  }

  std::string m_nvdec_missing;
};

TEST_F(SegmentDeviceFrames, FromNvdecTheModelReadsThemOnTheGpuAndTheOutputIsTheSoftwareDecodes) {
  auto mask_cpu = segment_job_run(config("mask_cpu.mkv", SegmentOutput::kMask, ExecMode::kCpu), {m_video});
  ASSERT_TRUE(mask_cpu.is_ok()) << mask_cpu.status().to_string();
  auto composite_cpu = segment_job_run(config("composite_cpu.mkv", SegmentOutput::kComposite, ExecMode::kCpu),
                                       {m_video});
  ASSERT_TRUE(composite_cpu.is_ok()) << composite_cpu.status().to_string();

  // Masks: no frame comes to the host at all.
  SegmentJobConfig mask = config("mask_gpu.mkv", SegmentOutput::kMask, ExecMode::kGpu);
  mask.reference = (m_dir / "mask_cpu.mkv").string();
  auto masks = run_on_nvdec(mask);
  if (!m_nvdec_missing.empty()) KILN_GPU_SKIP("no NVDEC for this video: " << m_nvdec_missing);
  ASSERT_TRUE(masks.is_ok()) << masks.status().to_string();
  const SegmentStreamSummary& stream = masks.value().streams[0];
  EXPECT_NE(stream.decode.find("frames kept on the device"), std::string::npos) << stream.decode;
  EXPECT_EQ(stream.decode.find("frames to the host"), std::string::npos) << stream.decode;
  EXPECT_EQ(stream.device_frames, kFrames);
  EXPECT_EQ(stream.written, kFrames);
  EXPECT_EQ(masks.value().model_input.rfind("device (", 0), 0u) << masks.value().model_input;
  EXPECT_EQ(masks.value().preprocess, "cuda (from NV12)") << "the frames stay NV12 until the fused preprocess";
  EXPECT_GE(masks.value().iou, 0.97) << "the masks of the CPU's run on the software decode";

  // Composite: blended on the device once the frame's map is there (the first batch's maps are made on the host, its
  // frames come down for the host's blend: at most 8); only the composite comes down.
  auto composite = run_on_nvdec(config("composite_gpu.mkv", SegmentOutput::kComposite, ExecMode::kGpu));
  ASSERT_TRUE(composite.is_ok()) << composite.status().to_string();
  EXPECT_EQ(composite.value().streams[0].device_frames, kFrames);
  EXPECT_GE(composite.value().streams[0].device_composites, kFrames - 8);
  EXPECT_TRUE(composite.value().streams[0].errors.empty()) << composite.value().streams[0].errors.front();
  // The NV12 conversion is within 2 levels of swscale's on average (NvdecDeviceFrames); the masks differ at the
  // person's edge (IoU >= 0.97). A wrong, stale or misaddressed frame is tens of levels off.
  expect_composites_close("composite_cpu.mkv", "composite_gpu.mkv", 4.0);
}

// Blurred backgrounds of NVDEC's frames: each frame blurred on the device (the blur op in place of a composite's
// uploaded background), the person blended over it there; only the result comes down. The blur averages the NV12
// conversion's differences away rather than adding to them. A preview samples every frame of a video this short:
// the samples are copies, the blends stay on the device.
TEST_F(SegmentDeviceFrames, BlurredBackgroundsAreMadeOnTheDevice) {
  auto cpu = segment_job_run(config("blur_cpu.mkv", SegmentOutput::kBlur, ExecMode::kCpu), {m_video});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  SegmentJobConfig c = config("blur_gpu.mkv", SegmentOutput::kBlur, ExecMode::kGpu);
  c.preview = (m_dir / "blur_preview.png").string();
  auto gpu = run_on_nvdec(c);
  if (!m_nvdec_missing.empty()) KILN_GPU_SKIP("no NVDEC for this video: " << m_nvdec_missing);
  ASSERT_TRUE(gpu.is_ok()) << gpu.status().to_string();
  const SegmentStreamSummary& stream = gpu.value().streams[0];
  EXPECT_EQ(stream.device_frames, kFrames);
  EXPECT_GE(stream.device_composites, kFrames - 8) << "blurred and blended on the device after the first batch";
  EXPECT_TRUE(stream.errors.empty()) << stream.errors.front();
  EXPECT_TRUE(std::filesystem::exists(c.preview)) << c.preview;
  expect_composites_close("blur_cpu.mkv", "blur_gpu.mkv", 4.0);
}

// Composites to NVENC (a GPU that has it; the H100 and H200 have none): blended on the device, converted into the
// encoder's device frame there and encoded from it: none of those frames comes down. Against the CPU's lossless
// composites, H.264 (constant quality 20) adds its own loss to the conversion's.
TEST_F(SegmentDeviceFrames, CompositesGoToNvencFromDeviceMemory) {
  auto cpu = segment_job_run(config("composite_cpu.mkv", SegmentOutput::kComposite, ExecMode::kCpu), {m_video});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  SegmentJobConfig c = config("composite_nvenc.mp4", SegmentOutput::kComposite, ExecMode::kGpu);
  c.codec.clear();
  c.hw_encode = "auto";
  auto gpu = run_on_nvdec(c);
  if (!m_nvdec_missing.empty()) KILN_GPU_SKIP("no NVDEC for this video: " << m_nvdec_missing);
  ASSERT_TRUE(gpu.is_ok()) << gpu.status().to_string();
  const SegmentStreamSummary& stream = gpu.value().streams[0];
  EXPECT_EQ(stream.written, kFrames);
  EXPECT_GE(stream.device_composites, kFrames - 8) << "blended on the device after the first batch";
  expect_composites_close("composite_cpu.mkv", "composite_nvenc.mp4", 8.0);
  if (stream.encode.find("h264_nvenc") == std::string::npos) GTEST_SKIP() << "this GPU has no NVENC: " << stream.encode;
  EXPECT_NE(stream.encode.find("(h264_nvenc, nv12 in device memory)"), std::string::npos) << stream.encode;
  EXPECT_NE(stream.encode.find(" of " + std::to_string(kFrames) + " frames from device memory"), std::string::npos)
      << stream.encode;
  EXPECT_EQ(stream.encode.find(", 0 of "), std::string::npos) << stream.encode;
}

TEST_F(SegmentDeviceFrames, AConversionThatFailsBringsTheFramesToTheHostOrStopsModeGpu) {
  // The first kernel kiln launches is the first frame's NV12 -> RGB (a composite shows the frames, so the reader
  // converts them before the batch forms).
  ASSERT_TRUE(fault_configure("kernel:1").is_ok());
  auto fallen_back = run_on_nvdec(config("auto.mkv", SegmentOutput::kComposite, ExecMode::kAuto));
  ASSERT_TRUE(fault_configure("kernel:1").is_ok());
  auto stopped = run_on_nvdec(config("gpu.mkv", SegmentOutput::kComposite, ExecMode::kGpu));
  ASSERT_TRUE(fault_configure("").is_ok());
  if (!m_nvdec_missing.empty()) KILN_GPU_SKIP("no NVDEC for this video: " << m_nvdec_missing);

  ASSERT_TRUE(fallen_back.is_ok()) << fallen_back.status().to_string();
  const SegmentStreamSummary& stream = fallen_back.value().streams[0];
  EXPECT_EQ(stream.written, kFrames);
  EXPECT_EQ(stream.device_frames, 0);
  EXPECT_NE(stream.decode.find("frames to the host: cuda: injected kernel launch failure"), std::string::npos)
      << stream.decode;
  EXPECT_GT(stream.foreground, 0.10) << "the frames that came to the host were segmented";

  ASSERT_FALSE(stopped.is_ok()) << "mode gpu does not fall back";
  EXPECT_NE(stopped.status().message().find("injected kernel launch failure"), std::string::npos)
      << stopped.status().to_string();
}

// Masks keep the frames NV12: the first kernel is the first batch's fused preprocess. When it fails in mode auto, the
// model's device path closes: that batch's frames are converted to RGB on the device and come down, the later frames
// come from the reader as RGB, the model reads them all from the host, and the masks are still the CPU run's. Mode
// gpu stops with the kernel's error.
TEST_F(SegmentDeviceFrames, WhenTheNv12PreprocessFailsTheFramesAreConvertedOnTheHostOrModeGpuStops) {
  auto cpu = segment_job_run(config("mask_cpu.mkv", SegmentOutput::kMask, ExecMode::kCpu), {m_video});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  SegmentJobConfig c = config("mask_auto.mkv", SegmentOutput::kMask, ExecMode::kAuto);
  c.reference = (m_dir / "mask_cpu.mkv").string();
  ASSERT_TRUE(fault_configure("kernel:1").is_ok());
  auto result = run_on_nvdec(c);
  ASSERT_TRUE(fault_configure("kernel:1").is_ok());
  auto stopped = run_on_nvdec(config("mask_gpu.mkv", SegmentOutput::kMask, ExecMode::kGpu));
  ASSERT_TRUE(fault_configure("").is_ok());
  if (!m_nvdec_missing.empty()) KILN_GPU_SKIP("no NVDEC for this video: " << m_nvdec_missing);
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  const SegmentJobSummary& s = result.value();
  EXPECT_EQ(s.streams[0].written, kFrames);
  EXPECT_EQ(s.streams[0].device_frames, 0);
  EXPECT_EQ(s.model_input.rfind("host (", 0), 0u) << s.model_input;
  EXPECT_NE(s.model_input.find("injected kernel launch failure"), std::string::npos) << s.model_input;
  EXPECT_GE(s.iou, 0.97) << "the masks of the CPU's run on the software decode";

  ASSERT_FALSE(stopped.is_ok()) << "mode gpu does not fall back";
  EXPECT_NE(stopped.status().message().find("injected kernel launch failure"), std::string::npos)
      << stopped.status().to_string();
}

}  // namespace
}  // namespace kiln
