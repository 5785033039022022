// InferSession on the CPU execution provider with the packaged models and real photographs.
#include <gtest/gtest.h>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/test_util.h"
#include "core/fault.h"
#include "infer/infer_test_util.h"

namespace kiln {
namespace {

using test::cpu_infer_options;
using test::session_open;

class PackagedModels : public ::testing::TestWithParam<const char*> {};

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

TEST_P(PackagedModels, LoadsAndRunsOnTheCpuProvider) {
  const PackagedModel model = test::packaged_model_require(GetParam());
  ASSERT_FALSE(model.file.empty());
  auto session = session_open(model.file, cpu_infer_options());
  ASSERT_TRUE(session);
  const ModelInfo& info = session->info();
  ASSERT_EQ(info.inputs.size(), 1u);
  EXPECT_EQ(info.inputs[0].name, model.input.name);
  EXPECT_TRUE(info.batch_dynamic) << "the packaged model's batch dimension is symbolic";
  ASSERT_EQ(info.outputs.size(), model.outputs.size());
  for (size_t k = 0; k < info.outputs.size(); ++k) EXPECT_EQ(info.outputs[k].name, model.outputs[k].name);
  EXPECT_EQ(session->report().provider, "cpu");

  std::vector<int64_t> shape;
  const auto input = test::model_input_make(model, test::photos_decode(), &shape);
  std::vector<Tensor> outputs;
  ASSERT_TRUE(session->run(input, shape, &outputs).is_ok());
  ASSERT_EQ(outputs.size(), model.outputs.size());
  for (const Tensor& t : outputs) {
    EXPECT_EQ(t.shape[0], 2) << t.name;
    EXPECT_EQ(static_cast<int64_t>(t.data.size()), t.elements());
    for (const float v : t.data) ASSERT_TRUE(std::isfinite(v)) << t.name;
  }
}

TEST_P(PackagedModels, BatchEqualsSingleRuns) {
  const PackagedModel model = test::packaged_model_require(GetParam());
  auto session = session_open(model.file, cpu_infer_options());
  ASSERT_TRUE(session);
  auto photos = test::photos_decode();
  photos.push_back(photos[0]);  // three items, one repeated
  std::vector<int64_t> shape;
  const auto input = test::model_input_make(model, photos, &shape);
  std::vector<Tensor> batch;
  ASSERT_TRUE(session->run(input, shape, &batch).is_ok());
  const int64_t per_item = static_cast<int64_t>(input.size()) / shape[0];
  for (int64_t i = 0; i < shape[0]; ++i) {
    std::vector<int64_t> one = shape;
    one[0] = 1;
    std::vector<Tensor> single;
    ASSERT_TRUE(session->run(std::span(input).subspan(i * per_item, per_item), one, &single).is_ok());
    for (size_t k = 0; k < single.size(); ++k) {
      const int64_t n = single[k].elements();
      const std::vector<float> part(batch[k].data.begin() + i * n, batch[k].data.begin() + (i + 1) * n);
      // Batched convolutions may block their sums differently: equal within float rounding.
      EXPECT_LT(max_abs_diff(part, single[k].data), 2e-4f) << model.name << " output " << k << " item " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Catalog, PackagedModels, ::testing::ValuesIn(test::kPackagedModelNames));

TEST(InferSession, SelfieFindsThePersonInEachPortrait) {
  const PackagedModel model = test::packaged_model_require("selfie");
  auto session = session_open(model.file, cpu_infer_options());
  ASSERT_TRUE(session);
  std::vector<int64_t> shape;
  const auto input = test::model_input_make(model, test::photos_decode(), &shape);
  std::vector<Tensor> outputs;
  ASSERT_TRUE(session->run(input, shape, &outputs).is_ok());
  const Tensor& mask = outputs[0];
  ASSERT_EQ(mask.shape, (std::vector<int64_t>{2, 1, 256, 256}));
  for (int i = 0; i < 2; ++i) {
    int64_t person = 0;
    for (int64_t p = 0; p < 256 * 256; ++p) person += mask.data[i * 256 * 256 + p] > 0.5f;
    const double share = static_cast<double>(person) / (256 * 256);
    // Measured with OpenCV DNN on the same photos: 0.54 (astronaut) and 0.58 (Grace Hopper).
    EXPECT_NEAR(share, i == 0 ? 0.54 : 0.58, 0.03) << test::photo_paths()[i];
  }
}

TEST(InferSession, EmbeddingsTellTheTwoPeopleApart) {
  const PackagedModel model = test::packaged_model_require("fr-embed");
  auto session = session_open(model.file, cpu_infer_options());
  ASSERT_TRUE(session);
  // The whole portrait scaled down is no aligned face, but two different photos must still not embed alike,
  // and one photo must embed exactly like itself.
  auto photos = test::photos_decode();
  photos.push_back(photos[0]);
  std::vector<int64_t> shape;
  const auto input = test::model_input_make(model, photos, &shape);
  std::vector<Tensor> outputs;
  ASSERT_TRUE(session->run(input, shape, &outputs).is_ok());
  const auto& e = outputs[0].data;
  auto cosine = [&](int a, int b) {
    double dot = 0, na = 0, nb = 0;
    for (int k = 0; k < 512; ++k) {
      dot += e[a * 512 + k] * e[b * 512 + k];
      na += e[a * 512 + k] * e[a * 512 + k];
      nb += e[b * 512 + k] * e[b * 512 + k];
    }
    return dot / std::sqrt(na * nb);
  };
  EXPECT_GT(cosine(0, 2), 0.9999);
  EXPECT_LT(cosine(0, 1), 0.8);
}

// Denormals are flushed inside runs only: opening and running leave the caller's float mode as it was (kiln's own
// CPU ops on that thread keep IEEE subnormals), and flushing changes the embeddings of real photos by float noise.
TEST(InferSession, FlushingDenormalsLeavesTheCallersFloatModeAndTheEmbeddings) {
  const PackagedModel model = test::packaged_model_require("fr-embed");
  auto photos = test::photos_decode();
  std::vector<int64_t> shape;
  const auto input = test::model_input_make(model, photos, &shape);
  std::vector<std::vector<float>> embeddings;
  for (bool flush : {true, false}) {
    InferOptions options = cpu_infer_options();
    options.flush_denormals = flush;
#if defined(__x86_64__)
    const unsigned before = _mm_getcsr();
#endif
    auto session = session_open(model.file, options);
    ASSERT_TRUE(session);
    std::vector<Tensor> outputs;
    ASSERT_TRUE(session->run(input, shape, &outputs).is_ok());
#if defined(__x86_64__)
    EXPECT_EQ(_mm_getcsr(), before) << "flush " << flush;
#endif
    embeddings.push_back(outputs[0].data);
  }
  ASSERT_EQ(embeddings[0].size(), embeddings[1].size());
  double worst = 0;
  for (size_t k = 0; k < embeddings[0].size(); ++k) {
    worst = std::max(worst, static_cast<double>(std::fabs(embeddings[0][k] - embeddings[1][k])));
  }
  EXPECT_LT(worst, 1e-3);
}

TEST(InferSession, TruncatedModelIsAClearError) {
  const PackagedModel model = test::packaged_model_require("fr-embed");
  test::TempDir dir;
  const auto bytes = test::read_file_bytes(model.file);
  const std::string path = dir.file("truncated.onnx");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size() / 2);
  auto session = InferSession::open(path, cpu_infer_options());
  ASSERT_FALSE(session.is_ok());
  EXPECT_EQ(session.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(session.status().message().find(path), std::string::npos) << session.status().message();
}

TEST(InferSession, NonOnnxAndMissingFilesAreClearErrors) {
  test::TempDir dir;
  const std::string text = dir.file("notes.onnx");
  test::write_text_file(text, "this is not a model\n");
  auto session = InferSession::open(text, cpu_infer_options());
  ASSERT_FALSE(session.is_ok());
  EXPECT_EQ(session.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(session.status().message().find(text), std::string::npos);
  const std::string empty = dir.file("empty.onnx");
  test::write_text_file(empty, "");
  EXPECT_EQ(InferSession::open(empty, cpu_infer_options()).status().code(), Errc::kInvalidArgument);
  auto missing = InferSession::open(dir.file("absent.onnx"), cpu_infer_options());
  EXPECT_EQ(missing.status().code(), Errc::kIoError);
  EXPECT_NE(missing.status().message().find("absent.onnx"), std::string::npos);
}

TEST(InferSession, SettingsItCannotHonourAreClearErrors) {
  const PackagedModel model = test::packaged_model_require("selfie");
  InferOptions options = cpu_infer_options();
  options.tensorrt.profile_min_shapes = "input:1x3x256x256";  // without opt and max shapes
  auto partial = InferSession::open(model.file, options);
  EXPECT_EQ(partial.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(partial.status().message().find("trt_profile_max_shapes"), std::string::npos) << partial.status().message();

  // A bad GPU_DEVICE_ID is an error when the process starts (the registry reads it once: a new process here).
  const test::TempDir dir;
  const test::CommandResult bad = test::run_command(
      "GPU_DEVICE_ID=second " + std::string(KILN_CLI_PATH) + " infer --model selfie " + test::photo_paths()[0] +
      " -o " + dir.file("masks.npy") + " --mode cpu");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("GPU_DEVICE_ID='second'"), std::string::npos) << bad.output;
}

// GPU_DEVICE_ID and GPU_MEMORY_LIMIT_GB are the CUDA backend's, read once: changed afterwards (Python's os.environ),
// they cannot put a session's stream on one device and its input on another (issue 38 item 11). Sessions opened after
// the change use what the registry started with.
TEST(InferSession, GpuVariablesChangedAfterStartChangeNothing) {
  const PackagedModel model = test::packaged_model_require("selfie");
  const Result<BackendOptions> started = BackendRegistry::instance().options();
  const char* before = std::getenv("GPU_DEVICE_ID");
  const std::string kept = before != nullptr ? before : "";
  ::setenv("GPU_DEVICE_ID", "second", 1);
  auto session = InferSession::open(model.file, cpu_infer_options());
  if (before != nullptr) {
    ::setenv("GPU_DEVICE_ID", kept.c_str(), 1);
  } else {
    ::unsetenv("GPU_DEVICE_ID");
  }
  ASSERT_EQ(session.is_ok(), started.is_ok()) << session.status().to_string();
  if (started.is_ok()) {
    EXPECT_EQ(BackendRegistry::instance().options()->device_id, started->device_id);
  }
}

TEST(InferSession, WrongRankOrSizeIsRejectedBeforeRunning) {
  const PackagedModel model = test::packaged_model_require("fr-embed");
  auto session = session_open(model.file, cpu_infer_options());
  ASSERT_TRUE(session);
  std::vector<Tensor> outputs;
  std::vector<float> input(3 * 112 * 112, 0.0f);
  const Status rank = session->run(input, {3, 112, 112}, &outputs);
  EXPECT_EQ(rank.code(), Errc::kInvalidArgument);
  EXPECT_NE(rank.message().find("N x 3 x 112 x 112"), std::string::npos) << rank.message();
  std::vector<float> wide(3 * 112 * 120, 0.0f);
  EXPECT_EQ(session->run(wide, {1, 3, 112, 120}, &outputs).code(), Errc::kInvalidArgument);
  EXPECT_EQ(session->run(input, {2, 3, 112, 112}, &outputs).code(), Errc::kInvalidArgument) << "too few values";
  EXPECT_TRUE(session->run(input, {1, 3, 112, 112}, &outputs).is_ok());
}

TEST(InferSession, InjectedProviderFailureOnTheCpuIsReportedAndTheSessionGoesOn) {
  const PackagedModel model = test::packaged_model_require("fr-embed");
  auto session = session_open(model.file, cpu_infer_options());
  ASSERT_TRUE(session);
  std::vector<int64_t> shape;
  const auto input = test::model_input_make(model, test::photos_decode(), &shape);
  std::vector<Tensor> clean, after;
  ASSERT_TRUE(session->run(input, shape, &clean).is_ok());
  ASSERT_TRUE(fault_configure("provider:1").is_ok());
  const Status failed = session->run(input, shape, &after);
  ASSERT_TRUE(fault_configure("").is_ok());
  EXPECT_EQ(failed.code(), Errc::kDeviceError);
  EXPECT_NE(failed.message().find("injected"), std::string::npos);
  ASSERT_TRUE(session->run(input, shape, &after).is_ok());
  EXPECT_EQ(after[0].data, clean[0].data);
}

TEST(InferSession, AModelWithBatchFixedAtOneRunsItemByItem) {
  // The embedder as its npm package ships it: batch dimension 1.
  auto fixed = session_open(test::fixed_batch_embedder_path());
  ASSERT_TRUE(fixed);
  EXPECT_FALSE(fixed->info().batch_dynamic);
  EXPECT_FALSE(fixed->report().batch_dynamic);
  const PackagedModel model = test::packaged_model_require("fr-embed");
  auto dynamic = session_open(model.file, cpu_infer_options());
  ASSERT_TRUE(dynamic);
  auto photos = test::photos_decode();
  photos.push_back(photos[1]);
  std::vector<int64_t> shape;
  const auto input = test::model_input_make(model, photos, &shape);
  std::vector<Tensor> one_by_one, batched;
  ASSERT_TRUE(fixed->run(input, shape, &one_by_one).is_ok());
  ASSERT_TRUE(dynamic->run(input, shape, &batched).is_ok());
  ASSERT_EQ(one_by_one[0].shape, (std::vector<int64_t>{3, 512}));
  EXPECT_LT(max_abs_diff(one_by_one[0].data, batched[0].data), 2e-4f);
}

}  // namespace
}  // namespace kiln
