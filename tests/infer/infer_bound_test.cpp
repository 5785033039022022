// InferSession::run_bound: outputs written in place into pooled host memory equal run()'s copies, and a caller
// cycling its tensors gets its blocks back instead of new ones.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "core/fault.h"
#include "infer/host_tensor.h"
#include "infer/infer_test_util.h"

namespace kiln {
namespace {

using test::session_open;

class BoundOutputs : public ::testing::TestWithParam<const char*> {};

// Every value of `bound` equals `copied` (same session, same input: the same arithmetic, written elsewhere).
void expect_same(const std::vector<Tensor>& copied, const std::vector<HostTensor>& bound, const std::string& what) {
  ASSERT_EQ(copied.size(), bound.size()) << what;
  for (size_t k = 0; k < copied.size(); ++k) {
    EXPECT_EQ(bound[k].name, copied[k].name) << what;
    ASSERT_EQ(bound[k].shape, copied[k].shape) << what << " output " << k;
    EXPECT_EQ(0, std::memcmp(bound[k].data(), copied[k].data.data(), copied[k].data.size() * sizeof(float)))
        << what << " output " << k;
  }
}

// The model's input for the two photos and the first again, and its outputs run unbound.
struct ThreePhotos {
  std::vector<int64_t> shape;
  std::vector<float> input;
  std::vector<Tensor> copied;
};

ThreePhotos three_photos_run(InferSession& session, const PackagedModel& model) {
  ThreePhotos run;
  auto photos = test::photos_decode();
  photos.push_back(photos[0]);
  run.input = test::model_input_make(model, photos, &run.shape);
  EXPECT_TRUE(session.run(run.input, run.shape, &run.copied).is_ok());
  return run;
}

void poison(std::vector<HostTensor>& outputs) {
  for (HostTensor& t : outputs) {
    for (int64_t i = 0; i < t.elements(); ++i) t.data()[i] = std::nanf("");
  }
}

TEST_P(BoundOutputs, EqualCopiedOutputsAndReuseTheirBlocks) {
  const PackagedModel model = test::packaged_model_require(GetParam());
  auto session = session_open(model.file);
  ASSERT_TRUE(session);
  EXPECT_EQ(session->host_backend().kind(), BackendKind::kCpu);
  const auto [shape, input, copied] = three_photos_run(*session, model);

  std::vector<HostTensor> outputs;
  ASSERT_TRUE(session->run_bound(input, shape, &outputs).is_ok());  // first of this size: copied, shapes learned
  expect_same(copied, outputs, "first run");
  EXPECT_EQ(session->report().bound_runs, 0);

  std::vector<const void*> blocks;
  for (const HostTensor& t : outputs) blocks.push_back(t.data());
  poison(outputs);
  ASSERT_TRUE(session->run_bound(input, shape, &outputs).is_ok());
  EXPECT_EQ(session->report().bound_runs, 1) << "the second batch of a size is bound";
  expect_same(copied, outputs, "bound run");
  for (size_t k = 0; k < outputs.size(); ++k) EXPECT_EQ(outputs[k].data(), blocks[k]) << "output " << k << " kept";

  // A smaller batch keeps the blocks; its rows equal the first rows of the larger one.
  const int64_t per_item = static_cast<int64_t>(input.size()) / shape[0];
  std::vector<int64_t> one = shape;
  one[0] = 1;
  std::vector<Tensor> single;
  ASSERT_TRUE(session->run(std::span(input).first(per_item), one, &single).is_ok());
  poison(outputs);
  ASSERT_TRUE(session->run_bound(std::span(input).first(per_item), one, &outputs).is_ok());
  EXPECT_EQ(session->report().bound_runs, 2);
  expect_same(single, outputs, "batch of one");
  for (size_t k = 0; k < outputs.size(); ++k) EXPECT_EQ(outputs[k].data(), blocks[k]) << "output " << k << " kept";
}

INSTANTIATE_TEST_SUITE_P(Catalog, BoundOutputs, ::testing::ValuesIn(test::kPackagedModelNames));

TEST(BoundOutputs, AnInjectedProviderFailureIsReportedAndTheNextRunIsBoundAgain) {
  const PackagedModel model = test::packaged_model_require("fr-embed");
  auto session = session_open(model.file);
  ASSERT_TRUE(session);
  std::vector<int64_t> shape;
  const auto input = test::model_input_make(model, test::photos_decode(), &shape);
  std::vector<Tensor> copied;
  ASSERT_TRUE(session->run(input, shape, &copied).is_ok());
  std::vector<HostTensor> outputs;
  ASSERT_TRUE(session->run_bound(input, shape, &outputs).is_ok());
  ASSERT_TRUE(fault_configure("provider:1").is_ok());
  const Status failed = session->run_bound(input, shape, &outputs);
  ASSERT_TRUE(fault_configure("").is_ok());
  EXPECT_EQ(failed.code(), Errc::kDeviceError) << "the CPU provider has nothing to fall back to";
  EXPECT_NE(failed.message().find("injected"), std::string::npos);
  poison(outputs);
  ASSERT_TRUE(session->run_bound(input, shape, &outputs).is_ok());
  EXPECT_EQ(session->report().bound_runs, 1);
  expect_same(copied, outputs, "after the failure");
}

// Batched and split runs may block their sums differently: equal within float rounding.
void expect_close(const std::vector<Tensor>& copied, const std::vector<HostTensor>& bound, const std::string& what) {
  ASSERT_EQ(copied.size(), bound.size()) << what;
  for (size_t k = 0; k < copied.size(); ++k) {
    ASSERT_EQ(bound[k].shape, copied[k].shape) << what << " output " << k;
    float worst = 0;
    for (size_t i = 0; i < copied[k].data.size(); ++i) {
      worst = std::max(worst, std::fabs(bound[k].data()[i] - copied[k].data[i]));
    }
    EXPECT_LT(worst, 2e-4f) << what << " output " << k;
  }
}

// `run` (a run of the three photos) with the provider's next run out of memory: it must succeed in halves.
void expect_run_in_halves(InferSession& session, const std::function<Status()>& run) {
  ASSERT_TRUE(fault_configure("provider_oom:1").is_ok());
  const Status st = run();
  ASSERT_TRUE(fault_configure("").is_ok());
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  EXPECT_EQ(session.report().oom_halvings, 1);
  EXPECT_EQ(session.report().batch_limit, 2) << "3 ran out of memory: its halves are 1 and 2";
  EXPECT_TRUE(session.report().fallbacks.empty()) << "halved, not moved to another provider";
}

TEST(BoundOutputs, ABatchThatRunsOutOfMemoryIsRunInHalvesAndLaterOnesSplit) {
  const PackagedModel model = test::packaged_model_require("fr-embed");
  auto session = session_open(model.file);
  ASSERT_TRUE(session);
  const auto [shape, input, copied] = three_photos_run(*session, model);
  std::vector<HostTensor> outputs;
  ASSERT_NO_FATAL_FAILURE(expect_run_in_halves(*session, [&] { return session->run_bound(input, shape, &outputs); }));
  expect_close(copied, outputs, "halves");
  poison(outputs);
  ASSERT_TRUE(session->run_bound(input, shape, &outputs).is_ok());
  EXPECT_EQ(session->report().oom_halvings, 1) << "a later batch of 3 is split at once, not tried";
  expect_close(copied, outputs, "split at once");
}

// The copied run (kiln.Model, the faces pipeline) halves the same way, and shares the limit with bound runs.
TEST(BoundOutputs, ACopiedRunThatRunsOutOfMemoryIsRunInHalvesToo) {
  const PackagedModel model = test::packaged_model_require("fr-embed");
  auto session = session_open(model.file);
  ASSERT_TRUE(session);
  const auto [shape, input, whole] = three_photos_run(*session, model);
  std::vector<Tensor> outputs;
  ASSERT_NO_FATAL_FAILURE(expect_run_in_halves(*session, [&] { return session->run(input, shape, &outputs); }));
  ASSERT_EQ(outputs.size(), whole.size());
  for (size_t k = 0; k < whole.size(); ++k) {
    ASSERT_EQ(outputs[k].shape, whole[k].shape);
    for (size_t i = 0; i < whole[k].data.size(); ++i) ASSERT_NEAR(outputs[k].data[i], whole[k].data[i], 2e-4f) << i;
  }
  std::vector<HostTensor> bound;
  ASSERT_TRUE(session->run_bound(input, shape, &bound).is_ok());
  EXPECT_EQ(session->report().oom_halvings, 1) << "the bound run splits at once too";
  expect_close(whole, bound, "bound after a copied halving");
}

TEST(BoundOutputs, ASingleItemThatRunsOutOfMemoryOnTheCpuIsAnError) {
  const PackagedModel model = test::packaged_model_require("fr-embed");
  auto session = session_open(model.file);
  ASSERT_TRUE(session);
  std::vector<int64_t> shape;
  const auto input = test::model_input_make(model, {test::photos_decode()[0]}, &shape);
  std::vector<HostTensor> outputs;
  ASSERT_TRUE(fault_configure("provider_oom:1").is_ok());
  const Status st = session->run_bound(input, shape, &outputs);
  ASSERT_TRUE(fault_configure("").is_ok());
  EXPECT_EQ(st.code(), Errc::kOutOfMemory);
  EXPECT_NE(st.message().find("injected out of memory"), std::string::npos) << st.message();
  EXPECT_TRUE(session->run_bound(input, shape, &outputs).is_ok());
}

TEST(BoundOutputs, ALargerBatchGetsLargerBlocks) {
  const PackagedModel model = test::packaged_model_require("selfie");
  auto session = session_open(model.file);
  ASSERT_TRUE(session);
  auto photos = test::photos_decode();
  std::vector<int64_t> shape;
  const auto input = test::model_input_make(model, photos, &shape);
  const int64_t per_item = static_cast<int64_t>(input.size()) / shape[0];
  std::vector<int64_t> one = shape;
  one[0] = 1;
  std::vector<HostTensor> outputs;
  ASSERT_TRUE(session->run_bound(std::span(input).first(per_item), one, &outputs).is_ok());
  ASSERT_TRUE(session->run_bound(std::span(input).first(per_item), one, &outputs).is_ok());
  const size_t small = outputs[0].memory.bytes();
  std::vector<Tensor> copied;
  ASSERT_TRUE(session->run(input, shape, &copied).is_ok());
  ASSERT_TRUE(session->run_bound(input, shape, &outputs).is_ok());
  EXPECT_GE(outputs[0].memory.bytes(), copied[0].data.size() * sizeof(float));
  EXPECT_GT(outputs[0].memory.bytes(), small);
  EXPECT_EQ(session->report().bound_runs, 2) << "the per-item output shape learned at batch 1 holds at batch 2";
  expect_same(copied, outputs, "larger batch");
}

TEST(BoundOutputs, AModelRunItemByItemIsCopied) {
  auto fixed = session_open(test::fixed_batch_embedder_path());
  ASSERT_TRUE(fixed);
  const PackagedModel model = test::packaged_model_require("fr-embed");
  auto photos = test::photos_decode();
  std::vector<int64_t> shape;
  const auto input = test::model_input_make(model, photos, &shape);
  std::vector<Tensor> copied;
  ASSERT_TRUE(fixed->run(input, shape, &copied).is_ok());
  std::vector<HostTensor> outputs;
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(fixed->run_bound(input, shape, &outputs).is_ok());
  expect_same(copied, outputs, "item by item");
  EXPECT_EQ(fixed->report().bound_runs, 0);
}

}  // namespace
}  // namespace kiln
