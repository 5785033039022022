// The quality job: in-memory images give the op's metrics in order; files are decoded, unreadable ones reported
// and counted; JSON lines and filtered copies appear whole.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/gpu_required.h"
#include "common/image_ops_util.h"
#include "common/test_util.h"
#include "kiln/apps/images.h"
#include "kiln/codec.h"
#include "kiln/device.h"
#include "kiln/image_ops.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

QualityJobConfig on_cpu() {
  QualityJobConfig config;
  config.exec.mode = ExecMode::kCpu;
  config.exec.batch_size = 2;  // several batches
  return config;
}

TEST(QualityJob, InMemoryImagesGiveTheOpsMetricsInOrder) {
  const VarShapeBatch images = test::random_batch({{40, 30, 3}, {17, 23, 1}, {64, 64, 4}, {9, 9, 3}, {31, 12, 3}}, 5);
  std::vector<QualityRecord> records;
  JobEvents<QualityRecord> events;
  events.record = [&](const QualityRecord& r) { records.push_back(r); };
  auto summary = quality_job_run(on_cpu(), ImageInputs{{}, images.view()}, events);
  ASSERT_TRUE(summary.is_ok()) << summary.status().to_string();
  std::vector<QualityMetrics> expected(5);
  ExecOptions cpu;
  cpu.mode = ExecMode::kCpu;
  ASSERT_TRUE(quality_measure(QualityParams{}, images.view(), expected.data(), cpu).is_ok());
  ASSERT_EQ(records.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(records[i].name, "#" + std::to_string(i));
    EXPECT_TRUE(records[i].ok);
    EXPECT_EQ(records[i].metrics.blur, expected[i].blur);
    EXPECT_EQ(records[i].metrics.score, expected[i].score);
    EXPECT_EQ(records[i].backend, "cpu");
  }
  EXPECT_EQ(summary->total, 5);
  EXPECT_EQ(summary->passed + summary->failed, 5);
  EXPECT_EQ(summary->backend, "cpu");
}

// kiln quality --mode gpu as a user runs it: files decoded one batch ahead of the kernels, each batch through the
// CUDA backend's staging slots; the CPU job's metrics and verdicts, in order.
TEST(QualityJob, OnCudaFilesGiveTheCpuJobsMetrics) {
  if (BackendRegistry::instance().find(BackendKind::kCuda) == nullptr) {
    KILN_GPU_SKIP("no CUDA device: the quality job on CUDA is checked on a GPU");
  }
  test::TempDir dir;
  const VarShapeBatch images = test::random_batch({{40, 30, 3}, {17, 23, 3}, {64, 64, 3}, {9, 9, 3}, {31, 12, 3}}, 6);
  const std::vector<std::string> files = test::png_files_write(images, dir.path().string());
  std::vector<std::vector<QualityRecord>> records(2);
  // The CPU's reference mode: the per-pixel math the kernels share (its AVX2 paths may differ by a level).
  const test::ScalarIsa scalar;
  for (const ExecMode mode : {ExecMode::kCpu, ExecMode::kGpu}) {
    QualityJobConfig config = on_cpu();  // batches of 2: three batches
    config.exec.mode = mode;
    JobEvents<QualityRecord> events;
    events.record = [&](const QualityRecord& r) { records[mode == ExecMode::kGpu].push_back(r); };
    auto summary = quality_job_run(config, ImageInputs{files, {}}, events);
    ASSERT_TRUE(summary.is_ok()) << summary.status().to_string();
    EXPECT_EQ(summary->backend, mode == ExecMode::kGpu ? "cuda" : "cpu");
  }
  ASSERT_EQ(records[0].size(), 5u);
  ASSERT_EQ(records[1].size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(records[1][i].name, files[i]);
    EXPECT_EQ(records[1][i].metrics.blur, records[0][i].metrics.blur) << i;
    EXPECT_EQ(records[1][i].metrics.brightness, records[0][i].metrics.brightness) << i;
    EXPECT_EQ(records[1][i].metrics.score, records[0][i].metrics.score) << i;
    EXPECT_EQ(records[1][i].verdict.pass, records[0][i].verdict.pass) << i;
  }
}

TEST(QualityJob, FilesJsonLinesAndFilteredCopies) {
  test::TempDir dir;
  fs::create_directory(dir.file("in"));
  const VarShapeBatch noisy = test::random_batch({{48, 48, 3}, {48, 48, 3}}, 7);
  ASSERT_TRUE(image_encode_file(noisy[0], dir.file("in/a.png")).is_ok());
  ASSERT_TRUE(image_encode_file(noisy[1], dir.file("in/b.png")).is_ok());
  test::write_text_file(dir.file("in/c.png"), "not a png");
  QualityJobConfig config = on_cpu();
  config.thresholds.min_blur = 0;
  config.thresholds.min_sharpness = 0;
  config.json = dir.file("q.jsonl");
  config.filter_to = dir.file("passed");
  auto summary = quality_job_run(config, ImageInputs{{dir.file("in")}, {}});
  ASSERT_TRUE(summary.is_ok()) << summary.status().to_string();
  EXPECT_EQ(summary->total, 3);
  EXPECT_EQ(summary->unreadable, 1);
  EXPECT_EQ(summary->passed, 2);
  EXPECT_EQ(summary->copied, 2);
  EXPECT_TRUE(fs::exists(dir.file("passed/a.png")) && fs::exists(dir.file("passed/b.png")));
  std::ifstream json(config.json);
  std::string line;
  int lines = 0;
  while (std::getline(json, line)) ++lines;
  EXPECT_EQ(lines, 3);
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
  }
}

TEST(QualityJob, BadRequestsAreRefused) {
  const VarShapeBatch images = test::random_batch({{8, 8, 3}}, 1);
  QualityJobConfig config = on_cpu();
  EXPECT_EQ(quality_job_run(config, ImageInputs{}).status().code(), Errc::kInvalidArgument);
  config.filter_to = "/tmp/never";
  EXPECT_EQ(quality_job_run(config, ImageInputs{{}, images.view()}).status().code(), Errc::kInvalidArgument);
  test::TempDir empty;
  EXPECT_EQ(quality_job_run(on_cpu(), ImageInputs{{empty.path().string()}, {}}).status().code(),
            Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
