// The segment job end to end on videos made here from real photographs: two inputs share the batcher, a person
// is found where there is one and nowhere else, frames and timestamps are kept, and the latency mode drops
// nothing on a source it keeps up with. (The CLI tests use ffmpeg-made H.264/VP9 videos; these also run under
// ThreadSanitizer.)
#include <gtest/gtest.h>

#include <filesystem>

#include "common/cuda_provider.h"
#include "common/gpu_required.h"
#include "common/photo_video.h"
#include "core/fault.h"
#include "io/video/video_reader.h"
#include "io/video/video_writer.h"
#include "kiln/apps/segment.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr int kW = 320, kH = 240, kFrames = 16;
#if defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;  // inference runs many times slower: frames are not dropped for lateness here
#else
constexpr bool kSanitized = false;
#endif

class SegmentJob : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = packaged_model("selfie");
    ASSERT_TRUE(model.is_ok()) << model.status().to_string() << " (make deps builds it)";
    m_dir = fs::temp_directory_path() / ("kiln_segment_job_" + std::to_string(::getpid()));
    fs::create_directories(m_dir);
    person = (m_dir / "person.mp4").string();
    empty = (m_dir / "rocket.mp4").string();
    test::photo_video_write(test::kAstronautPhoto, person, kW, kH, kFrames);
    test::photo_video_write(test::kRocketPhoto, empty, kW, kH, kFrames);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  SegmentJobConfig config(const std::string& output) {
    SegmentJobConfig c;
    c.output_dir = (m_dir / output).string();
    c.exec.mode = ExecMode::kCpu;
    c.exec.threads = 2;
    return c;
  }

  fs::path m_dir;
  std::string person, empty;
};

TEST_F(SegmentJob, TwoInputsShareTheBatcherAndKeepEveryFrame) {
  SegmentJobConfig c = config("out");
  c.exec.batch_size = 4;
  auto result = segment_job_run(c, {person, empty});
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  const SegmentJobSummary& s = result.value();
  ASSERT_EQ(s.streams.size(), 2u);
  EXPECT_GT(s.batch_mean, 1.0);  // frames of both inputs went through together
  EXPECT_GT(s.streams[0].foreground, 0.10);
  EXPECT_LT(s.streams[0].foreground, 0.70);
  EXPECT_LT(s.streams[1].foreground, 0.02);
  for (const SegmentStreamSummary& st : s.streams) {
    EXPECT_EQ(st.frames, kFrames);
    EXPECT_EQ(st.written, kFrames);
    EXPECT_EQ(st.dropped, 0);
    auto reader = VideoReader::open(st.output);
    ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
    int64_t n = 0;
    for (;; ++n) {
      VideoFrame f;
      bool end = false;
      ASSERT_TRUE(reader.value()->read(&f, &end).is_ok());
      if (end) break;
      EXPECT_NEAR(f.time_s, n / 30.0, 1e-4);  // the input's timestamps (MP4 may count them in a finer clock)
    }
    EXPECT_EQ(n, kFrames);
  }
  EXPECT_EQ(s.stages.size(), 4u);
  EXPECT_FALSE(s.bottleneck.empty());
  EXPECT_EQ(s.model_input, "host");  // the CPU provider reads host memory

  // High-water marks: the model's outputs come from the CPU's host pool, their blocks kept from batch to batch; each
  // input had frames in flight, never more than its budget.
  const SegmentPoolSummary* host = nullptr;
  int in_flight = 0;
  for (const SegmentPoolSummary& p : s.pools) {
    if (p.name == "cpu host memory") host = &p;
    if (p.unit != "frames") continue;
    ++in_flight;
    EXPECT_GE(p.peak, 1) << p.name;
    EXPECT_LE(p.peak, p.limit) << p.name;
  }
  EXPECT_EQ(in_flight, 2);
  ASSERT_NE(host, nullptr);
  EXPECT_GT(host->peak, 0);
  EXPECT_LT(host->allocations, static_cast<int64_t>(2 * kFrames / s.batch_mean)) << "fewer blocks than batches";
}

TEST_F(SegmentJob, ABatchThatRunsOutOfMemoryIsHalvedAndLaterBatchesStaySmaller) {
  SegmentJobConfig c = config("oom.mp4");
  c.exec.batch_size = 4;
  c.max_delay_us = 1'000'000;  // batches fill up to 4: the first real one is 4 frames
  ASSERT_TRUE(fault_configure("provider_oom:2").is_ok());  // run 1 is the session's warm-up
  auto result = segment_job_run(c, {person});
  ASSERT_TRUE(fault_configure("").is_ok());
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  const SegmentJobSummary& s = result.value();
  EXPECT_EQ(s.streams[0].written, kFrames);
  EXPECT_GT(s.streams[0].foreground, 0.10);
  EXPECT_EQ(s.infer.oom_halvings, 1);
  EXPECT_EQ(s.infer.batch_limit, 2);
  EXPECT_LE(s.batch_limit, 2) << "the batcher no longer forms batches that do not fit";
  EXPECT_LT(s.batch_mean, 4.0);
}

TEST_F(SegmentJob, LatencyModeKeepsUpWithAPacedSourceAndDropsNothing) {
  SegmentJobConfig c = config("latency.mp4");
  c.pipeline = "latency";
  if (kSanitized) c.stale_ms = 10000;
  auto result = segment_job_run(c, {person});
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  const SegmentJobSummary& s = result.value();
  EXPECT_EQ(s.streams[0].written, kFrames);
  EXPECT_EQ(s.streams[0].dropped, 0);
  EXPECT_NEAR(s.batch_mean, 1.0, 1e-9);
  EXPECT_GT(s.latency_p50_ms, 0.0);
  EXPECT_GE(s.seconds, (kFrames - 1) / 30.0 * 0.9);  // paced at the source's 30 fps
}

TEST_F(SegmentJob, ArraysHoldTheProbabilities) {
  SegmentJobConfig c = config("p.npy");
  c.output = SegmentOutput::kNpy;
  auto result = segment_job_run(c, {person});
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  EXPECT_EQ(result.value().streams[0].written, kFrames);
  // kFrames x kH x kW float16 after an NPY header (a multiple of 64 bytes).
  const uintmax_t data = static_cast<uintmax_t>(kFrames) * kW * kH * 2, size = fs::file_size(m_dir / "p.npy");
  ASSERT_GT(size, data);
  EXPECT_EQ((size - data) % 64, 0u);
  EXPECT_LE(size - data, 512u);
}

TEST_F(SegmentJob, BadSettingsFailBeforeAnythingIsWritten) {
  SegmentJobConfig c = config("bad.mp4");
  c.output = SegmentOutput::kComposite;
  c.background = "#zz0000";
  auto result = segment_job_run(c, {person});
  ASSERT_FALSE(result.is_ok());
  EXPECT_FALSE(fs::exists(m_dir / "bad.mp4"));
  c = config("alpha.mp4");
  c.output = SegmentOutput::kAlpha;
  result = segment_job_run(c, {person});
  ASSERT_FALSE(result.is_ok());
  EXPECT_NE(result.status().message().find(".webm"), std::string::npos);
  c = config("x.mp4");
  result = segment_job_run(c, {(m_dir / "missing.mp4").string()});
  ASSERT_FALSE(result.is_ok());
  EXPECT_EQ(result.status().code(), Errc::kIoError);
}

// With a CUDA device and ONNX Runtime's CUDA provider: the model, the fused preprocess and the matte all on the GPU,
// and its masks against the CPU run's (lossless): mean IoU >= 0.97 (the provider convolves in TF32 and batches by
// timing, which moves probabilities near the threshold, at the person's edge only).
TEST_F(SegmentJob, OnCudaEveryStageRunsThereAndTheMasksAreTheCpus) {
  if (!test::cuda_provider_available()) {
    KILN_GPU_SKIP("no CUDA device with ONNX Runtime's CUDA provider: the GPU segment job needs one");
  }
  SegmentJobConfig cpu = config("cpu.mkv");
  cpu.codec = "ffv1";
  cpu.hw_decode = "none";
  auto reference = segment_job_run(cpu, {person});
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
  SegmentJobConfig gpu = config("gpu.mkv");
  gpu.codec = "ffv1";
  gpu.exec.mode = ExecMode::kGpu;
  gpu.reference = (m_dir / "cpu.mkv").string();
  auto result = segment_job_run(gpu, {person});
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  const SegmentJobSummary& s = result.value();
  EXPECT_EQ(s.infer.provider, "cuda");
  EXPECT_EQ(s.preprocess.rfind("cuda", 0), 0u) << s.preprocess;  // "cuda (from NV12)" with NVDEC's frames
  EXPECT_EQ(s.matte, "cuda");
  EXPECT_EQ(s.model_input.rfind("device (", 0), 0u) << s.model_input;  // no round trip through the host
  EXPECT_EQ(s.probabilities.rfind("device (", 0), 0u) << s.probabilities;  // nor from the model to the matte
  EXPECT_EQ(s.streams[0].written, kFrames);
  EXPECT_GE(s.iou, 0.97);
}

}  // namespace
}  // namespace kiln
