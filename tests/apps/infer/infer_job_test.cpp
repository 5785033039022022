// The kiln infer job on images given already decoded: the same rows as on their files, in input order, and a clear
// error for images it cannot feed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/cuda_provider.h"
#include "common/gpu_required.h"
#include "common/test_util.h"
#include "infer/infer_test_util.h"
#include "kiln/apps/infer.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// The float32 rows of an .npy written by the job: its last rows x per_row values.
std::vector<float> npy_floats(const std::string& path, size_t values) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GE(bytes.size(), values * sizeof(float)) << path;
  std::vector<float> out(values);
  if (bytes.size() >= values * sizeof(float)) {
    std::memcpy(out.data(), bytes.data() + bytes.size() - values * sizeof(float), values * sizeof(float));
  }
  return out;
}

InferJobConfig selfie_job(const fs::path& output) {
  InferJobConfig config;
  config.model = "selfie";
  config.output = output.string();
  config.exec.mode = ExecMode::kCpu;
  config.exec.threads = 2;
  config.exec.batch_size = 2;  // three images: a full batch and a part
  return config;
}

TEST(InferJob, DecodedImagesGiveTheRowsOfTheirFiles) {
  test::packaged_model_require("selfie");
  const std::string png = test::photo_paths()[0];  // astronaut.png: decoded at full size either way
  auto decoded = image_decode_file(png);
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  const test::TempDir dir;
  const std::vector<std::string> files = {png, png, png};
  auto from_files = infer_job_run(selfie_job(dir.path() / "files.npy"), ImageInputs{files, {}});
  ASSERT_TRUE(from_files.is_ok()) << from_files.status().to_string();
  EXPECT_EQ(from_files->preprocess, "cpu");

  // The second image mirrored, so that a row written out of order shows.
  ImageBuffer mirrored = decoded.value();
  const int32_t w = mirrored.width;
  for (int32_t y = 0; y < mirrored.height; ++y) {
    for (int32_t x = 0; x < w / 2; ++x) {
      for (int32_t c = 0; c < 3; ++c) {
        std::swap(mirrored.pixels[(static_cast<size_t>(y) * w + x) * 3 + c],
                  mirrored.pixels[(static_cast<size_t>(y) * w + (w - 1 - x)) * 3 + c]);
      }
    }
  }
  const std::vector<ImageView> views = {decoded->view(), mirrored.view(), decoded->view()};
  ImageInputs inputs;
  inputs.images = VarShapeBatchView{views.data(), 3};
  auto from_images = infer_job_run(selfie_job(dir.path() / "images.npy"), inputs);
  ASSERT_TRUE(from_images.is_ok()) << from_images.status().to_string();
  ASSERT_EQ(from_images->written, 3);
  EXPECT_EQ(from_images->names, (std::vector<std::string>{"#0", "#1", "#2"}));

  const size_t per_row = 256 * 256;
  const auto a = npy_floats((dir.path() / "files.npy").string(), 3 * per_row);
  const auto b = npy_floats((dir.path() / "images.npy").string(), 3 * per_row);
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), per_row * sizeof(float))) << "row 0";
  EXPECT_EQ(0, std::memcmp(a.data() + 2 * per_row, b.data() + 2 * per_row, per_row * sizeof(float))) << "row 2";
  EXPECT_NE(0, std::memcmp(a.data() + per_row, b.data() + per_row, per_row * sizeof(float))) << "row 1 is mirrored";
  // The mask of the mirrored image is the mirrored mask, within the model's own asymmetry.
  double diff = 0;
  for (int y = 0; y < 256; ++y) {
    for (int x = 0; x < 256; ++x) diff += std::fabs(b[per_row + y * 256 + x] - a[y * 256 + 255 - x]);
  }
  EXPECT_LT(diff / per_row, 0.05);
}

TEST(InferJob, DecodedImagesThatAreNotRgbAreRefused) {
  test::packaged_model_require("selfie");
  std::vector<uint8_t> gray(64 * 64, 128);
  const std::vector<ImageView> views = {image_view_packed(gray.data(), 64, 64, 1, PixelType::kU8)};
  ImageInputs inputs;
  inputs.images = VarShapeBatchView{views.data(), 1};
  const test::TempDir dir;
  auto result = infer_job_run(selfie_job(dir.path() / "x.npy"), inputs);
  ASSERT_FALSE(result.is_ok());
  EXPECT_EQ(result.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(result.status().message().find("#0"), std::string::npos) << result.status().message();
  EXPECT_FALSE(fs::exists(dir.path() / "x.npy"));
}

// With a CUDA device and ONNX Runtime's CUDA provider: kiln infer --mode gpu (the fused preprocess on CUDA, the model
// on the CUDA provider) gives the CPU job's masks: mean absolute probability difference <= 0.01 per image (the
// provider convolves in TF32).
TEST(InferJob, OnCudaThePreprocessAndTheModelRunThereWithTheCpusRows) {
  test::packaged_model_require("selfie");
  if (!test::cuda_provider_available()) {
    KILN_GPU_SKIP("no CUDA device with ONNX Runtime's CUDA provider: the GPU infer job needs one");
  }
  const test::TempDir dir;
  const std::vector<std::string> files = test::photo_paths();
  auto cpu = infer_job_run(selfie_job(dir.path() / "cpu.npy"), ImageInputs{files, {}});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  InferJobConfig config = selfie_job(dir.path() / "gpu.npy");
  config.exec.mode = ExecMode::kGpu;
  auto gpu = infer_job_run(config, ImageInputs{files, {}});
  ASSERT_TRUE(gpu.is_ok()) << gpu.status().to_string();
  EXPECT_EQ(gpu->report.provider, "cuda");
  EXPECT_EQ(gpu->preprocess, "cuda");
  EXPECT_EQ(cpu->preprocess, "cpu");
  // The preprocess wrote every batch into device memory the provider read in place.
  EXPECT_EQ(gpu->model_input.rfind("device (", 0), 0u) << gpu->model_input;
  EXPECT_EQ(cpu->model_input, "host");
  const size_t per_row = 256 * 256;
  const auto a = npy_floats((dir.path() / "cpu.npy").string(), files.size() * per_row);
  const auto b = npy_floats((dir.path() / "gpu.npy").string(), files.size() * per_row);
  for (size_t k = 0; k < files.size(); ++k) {
    double diff = 0;
    for (size_t i = 0; i < per_row; ++i) diff += std::fabs(a[k * per_row + i] - b[k * per_row + i]);
    EXPECT_LE(diff / per_row, 0.01) << files[k];
  }
}

}  // namespace
}  // namespace kiln
