// The preprocess job: into caller memory it equals the op; to a file it writes only the readable inputs, and
// nothing at all when none can be read.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

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

PreprocessJobConfig config_16x8() {
  PreprocessJobConfig config;
  config.width = 16;
  config.height = 8;
  config.exec.mode = ExecMode::kCpu;
  config.exec.batch_size = 3;
  return config;
}

TEST(PreprocessJob, IntoMemoryItEqualsTheOp) {
  const VarShapeBatch images = test::random_batch({{40, 30, 3}, {17, 23, 3}, {64, 64, 3}, {9, 9, 3}}, 3);
  const PreprocessJobConfig config = config_16x8();
  const size_t item = 3 * 8 * 16 * sizeof(float);
  std::vector<uint8_t> memory(4 * item);
  const TensorMemory place = [&](int64_t i) -> void* { return memory.data() + static_cast<size_t>(i) * item; };
  auto summary = preprocess_job_run(config, ImageInputs{{}, images.view()}, &place);
  ASSERT_TRUE(summary.is_ok()) << summary.status().to_string();
  EXPECT_EQ(summary->written, 4);
  EXPECT_EQ(summary->item_shape, (std::vector<int64_t>{3, 8, 16}));

  const VarShapeBatch expected = VarShapeBatch::allocate(std::vector<ImageShape>(4, {16, 8, 3, PixelType::kF32, Layout::kCHW}));
  ExecOptions cpu;
  cpu.mode = ExecMode::kCpu;
  ASSERT_TRUE(preprocess(config.params, images.view(), expected.view(), cpu).is_ok());
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(std::memcmp(memory.data() + static_cast<size_t>(i) * item, expected[i].data, item), 0) << i;
  }
}

TEST(PreprocessJob, FilesSkipTheUnreadableAndNothingIsWrittenWhenNoneReads) {
  test::TempDir dir;
  const VarShapeBatch images = test::random_batch({{20, 30, 3}, {25, 25, 3}}, 9);
  ASSERT_TRUE(image_encode_file(images[0], dir.file("a.png")).is_ok());
  test::write_text_file(dir.file("b.png"), "broken");
  ASSERT_TRUE(image_encode_file(images[1], dir.file("c.png")).is_ok());
  PreprocessJobConfig config = config_16x8();
  config.output = dir.file("out.npy");
  std::vector<std::string> skipped;
  JobEvents<ImageRecord> events;
  events.record = [&](const ImageRecord& r) {
    if (!r.ok) skipped.push_back(r.name);
  };
  auto summary = preprocess_job_run(config, ImageInputs{{dir.file("a.png"), dir.file("b.png"), dir.file("c.png")}, {}},
                                    nullptr, events);
  ASSERT_TRUE(summary.is_ok()) << summary.status().to_string();
  EXPECT_EQ(summary->written, 2);
  EXPECT_EQ(summary->unreadable, 1);
  EXPECT_EQ(skipped, (std::vector<std::string>{dir.file("b.png")}));
  EXPECT_EQ(summary->names, (std::vector<std::string>{dir.file("a.png"), dir.file("c.png")}));
  EXPECT_TRUE(fs::exists(config.output));

  config.output = dir.file("none.npy");
  auto none = preprocess_job_run(config, ImageInputs{{dir.file("b.png")}, {}});
  EXPECT_EQ(none.status().code(), Errc::kIoError);
  EXPECT_FALSE(fs::exists(config.output));
}

// kiln preprocess --mode gpu as a user runs it: files decoded (one batch ahead of the kernels), each batch through the
// CUDA backend's staging slots; the CPU job's tensors exactly.
TEST(PreprocessJob, OnCudaFilesGiveTheCpuJobsTensors) {
  if (BackendRegistry::instance().find(BackendKind::kCuda) == nullptr) {
    KILN_GPU_SKIP("no CUDA device: the preprocess job on CUDA is checked on a GPU");
  }
  test::TempDir dir;
  const VarShapeBatch images = test::random_batch({{40, 30, 3}, {17, 23, 3}, {64, 64, 3}, {9, 9, 3}, {33, 61, 3}}, 4);
  const std::vector<std::string> files = test::png_files_write(images, dir.path().string());
  const size_t item = 3 * 8 * 16 * sizeof(float);
  std::vector<std::vector<uint8_t>> memory(2, std::vector<uint8_t>(files.size() * item));
  // The CPU's reference mode: the per-pixel math the kernels share (its AVX2 paths may differ by a level).
  const test::ScalarIsa scalar;
  for (const ExecMode mode : {ExecMode::kCpu, ExecMode::kGpu}) {
    PreprocessJobConfig config = config_16x8();  // batches of 3: two batches
    config.exec.mode = mode;
    std::vector<uint8_t>& out = memory[mode == ExecMode::kGpu];
    const TensorMemory place = [&](int64_t i) -> void* { return out.data() + static_cast<size_t>(i) * item; };
    auto summary = preprocess_job_run(config, ImageInputs{files, {}}, &place);
    ASSERT_TRUE(summary.is_ok()) << summary.status().to_string();
    EXPECT_EQ(summary->written, 5);
    EXPECT_EQ(summary->backend, mode == ExecMode::kGpu ? "cuda" : "cpu");
  }
  EXPECT_EQ(memory[0], memory[1]);
}

TEST(PreprocessJob, SettingsAreChecked) {
  const VarShapeBatch images = test::random_batch({{8, 8, 3}}, 1);
  PreprocessJobConfig config = config_16x8();
  config.output = "/tmp/kiln_never.npy";
  config.width = 0;
  EXPECT_EQ(preprocess_job_run(config, ImageInputs{{}, images.view()}).status().code(), Errc::kInvalidArgument);
  config = config_16x8();
  EXPECT_EQ(preprocess_job_run(config, ImageInputs{{}, images.view()}).status().code(),
            Errc::kInvalidArgument);  // neither a file nor memory
  EXPECT_EQ(preprocess_job_params().set(config, "mean", ParamValue(std::vector<double>{1, 2}), "mean").code(),
            Errc::kInvalidArgument);  // 1, 3 or 4 values
  ASSERT_TRUE(preprocess_job_params().set(config, "mean", ParamValue(0.5), "mean").is_ok());
  EXPECT_EQ(config.params.mean[0], 0.5f);
  EXPECT_EQ(config.params.mean[2], 0.5f);
  EXPECT_EQ(config.params.mean[3], 0.0f);  // alpha keeps its default
}

}  // namespace
}  // namespace kiln
