// Staging a model's input where the model reads it: on the host for the CPU provider (here), in device memory the
// CUDA provider reads in place where a CUDA device exists; and device memory where a backend has none to lend.
#include <gtest/gtest.h>

#include <memory>

#include "common/cuda_provider.h"
#include "common/gpu_required.h"
#include "core/backend_block.h"
#include "core/fault.h"
#include "infer/infer_test_util.h"
#include "infer/input_stager.h"

namespace kiln {
namespace {

TEST(DeviceMemory, TheCpuBackendLendsNoneAndSaysSo) {
  const std::unique_ptr<Backend> cpu = cpu_backend_create();
  const auto block = DeviceBlock::acquire(*cpu, 1024);
  EXPECT_EQ(block.status().code(), Errc::kNotImplemented);
  EXPECT_NE(block.status().message().find("no device memory"), std::string::npos) << block.status().to_string();
  float host[4] = {};
  EXPECT_EQ(cpu->device_download(host, host, sizeof(host)).code(), Errc::kNotImplemented);
  EXPECT_EQ(cpu->device_upload(host, host, sizeof(host)).code(), Errc::kNotImplemented);
  auto stream = cpu->stream_create();
  ASSERT_TRUE(stream.is_ok());
  EXPECT_EQ(stream.value()->native_handle(), nullptr);
}

// The photos through a stager and a session, and through the test's own CPU preprocess and the session's run().
class StagedPhotos : public ::testing::Test {
 protected:
  void SetUp() override {
    model = test::packaged_model_require("fr-embed");
    images = test::photos_decode();
    for (const ImageBuffer& image : images) views.push_back(image.view());
    input = test::model_input_make(model, images, &shape);
    auto cpu = InferSession::open(model.file, test::cpu_infer_options());
    ASSERT_TRUE(cpu.is_ok());
    ASSERT_TRUE(cpu.value()->run(input, shape, &cpu_outputs).is_ok());
  }

  std::unique_ptr<InputStager> stager_make(InferSession& session, OpExecutor& executor) const {
    const ModelInput& in = model.input;
    return std::make_unique<InputStager>(session, executor, model_preprocess_params(in), in.width, in.height,
                                         model_input_layout(in));
  }

  // The photos staged by an executor in `mode` for `session` and run twice (the second run is bound in place); the
  // outputs as Tensors.
  std::vector<Tensor> staged_run(InferSession& session, ExecMode mode, StagedInput* staged) {
    ExecOptions exec;
    exec.mode = mode;
    OpExecutor executor(exec);
    const std::unique_ptr<InputStager> stager = stager_make(session, executor);
    ExecReport report;
    const Status st = stager->stage(VarShapeBatch::wrap(views).view(), staged, &report);
    EXPECT_TRUE(st.is_ok()) << st.to_string();
    std::vector<HostTensor> outputs;
    for (int run = 0; run < 2 && st.is_ok(); ++run) {
      const Status ran = stager->run(*staged, &outputs);
      EXPECT_TRUE(ran.is_ok()) << ran.to_string();
    }
    where = stager->where(session.report());
    std::vector<Tensor> tensors;
    for (const HostTensor& t : outputs) {
      tensors.push_back(Tensor{t.name, t.shape, std::vector<float>(t.values().begin(), t.values().end())});
    }
    return tensors;
  }

  PackagedModel model;
  std::vector<ImageBuffer> images;
  std::vector<ImageView> views;
  std::vector<int64_t> shape;
  std::vector<float> input;
  std::vector<Tensor> cpu_outputs;
  std::string where;
};

TEST_F(StagedPhotos, OnTheCpuProviderTheInputIsStagedOnTheHostAndGivesRunsOutputs) {
  auto session = InferSession::open(model.file, test::cpu_infer_options());
  ASSERT_TRUE(session.is_ok());
  EXPECT_EQ(session.value()->device_backend(), nullptr);
  StagedInput staged;
  const std::vector<Tensor> outputs = staged_run(*session.value(), ExecMode::kCpu, &staged);
  EXPECT_FALSE(staged.on_device);
  EXPECT_EQ(where, "host");
  EXPECT_EQ(session.value()->report().device_input_runs, 0);
  ASSERT_EQ(outputs.size(), cpu_outputs.size());
  EXPECT_EQ(outputs[0].shape, cpu_outputs[0].shape);
  EXPECT_EQ(outputs[0].data, cpu_outputs[0].data);  // the same CPU preprocess and provider: the same bits
}

TEST_F(StagedPhotos, ADeviceInputOfTheWrongShapeOrOnABackendWithoutDeviceMemoryIsAClearError) {
  auto session = InferSession::open(model.file, test::cpu_infer_options());
  ASSERT_TRUE(session.is_ok());
  const std::unique_ptr<Backend> cpu = cpu_backend_create();
  std::vector<HostTensor> outputs;
  std::vector<int64_t> wrong = shape;
  wrong.pop_back();
  const Status rank = session.value()->run_bound_from_device(input, *cpu, wrong, &outputs);
  EXPECT_EQ(rank.code(), Errc::kInvalidArgument) << rank.to_string();
  // The CPU provider reads host memory: the batch is copied there first, which a backend lending no device memory
  // cannot do.
  const Status copy = session.value()->run_bound_from_device(input, *cpu, shape, &outputs);
  EXPECT_EQ(copy.code(), Errc::kNotImplemented) << copy.to_string();
  EXPECT_NE(copy.message().find("no device memory"), std::string::npos) << copy.to_string();
  EXPECT_EQ(session.value()->report().device_input_runs, 0);
}

TEST_F(StagedPhotos, OnTheCpuProviderOutputsCannotStayOnADeviceAndTheRunSaysWhy) {
  auto session = InferSession::open(model.file, test::cpu_infer_options());
  ASSERT_TRUE(session.is_ok());
  OpExecutor executor;
  const std::unique_ptr<InputStager> stager = stager_make(*session.value(), executor);
  StagedInput staged;
  ExecReport report;
  ASSERT_TRUE(stager->stage(VarShapeBatch::wrap(views).view(), &staged, &report).is_ok());
  std::vector<HostTensor> learned;
  ASSERT_TRUE(stager->run(staged, &learned).is_ok());  // the outputs' shapes are known: the provider is the reason
  std::vector<DeviceTensor> outputs;
  const Status st = stager->run_to_device(staged, &outputs);
  EXPECT_EQ(st.code(), Errc::kNotImplemented) << st.to_string();
  EXPECT_NE(st.message().find("CPU provider"), std::string::npos) << st.to_string();
  EXPECT_EQ(session.value()->report().device_output_runs, 0);
}

class StagedOnCuda : public StagedPhotos {
 protected:
  void SetUp() override {
    if (!test::cuda_provider_available()) {
      KILN_GPU_SKIP("no CUDA provider here (a CUDA device and -DKILN_ORT_GPU=ON): device staging needs both");
    }
    StagedPhotos::SetUp();
  }

  // A mode-gpu session (`session`), its stager on `executor` (`stager`) and the photos staged by it.
  void gpu_staged(OpExecutor& executor, StagedInput* staged) {
    InferOptions options;
    options.mode = ExecMode::kGpu;
    auto opened = InferSession::open(model.file, options);
    ASSERT_TRUE(opened.is_ok()) << opened.status().to_string();
    session = std::move(opened).value();
    stager = stager_make(*session, executor);
    ExecReport report;
    ASSERT_TRUE(stager->stage(VarShapeBatch::wrap(views).view(), staged, &report).is_ok());
  }

  std::unique_ptr<InferSession> session;
  std::unique_ptr<InputStager> stager;
};

TEST_F(StagedOnCuda, ThePreprocessWritesDeviceMemoryTheProviderReadsInPlace) {
  InferOptions options;
  options.mode = ExecMode::kGpu;
  auto session = InferSession::open(model.file, options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  Backend* device = session.value()->device_backend();
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->kind(), BackendKind::kCuda);
  StagedInput staged;
  const std::vector<Tensor> outputs = staged_run(*session.value(), ExecMode::kGpu, &staged);
  EXPECT_TRUE(staged.on_device);
  const InferReport report = session.value()->report();
  EXPECT_EQ(report.provider, "cuda");
  EXPECT_EQ(report.device_input_runs, 2);
  EXPECT_GE(report.bound_runs, 1);
  EXPECT_EQ(where, "device (2 runs)");
  ASSERT_FALSE(outputs.empty());
  test::expect_rows_close(outputs[0], cpu_outputs[0], shape[0]);
}

TEST_F(StagedOnCuda, AfterAFallbackToTheCpuProviderADeviceBatchIsCopiedToTheHost) {
  InferOptions options;
  options.threads = test::cpu_infer_options().threads;
  auto session = InferSession::open(model.file, options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  ASSERT_EQ(session.value()->report().provider, "cuda");
  OpExecutor executor;
  const std::unique_ptr<InputStager> stager = stager_make(*session.value(), executor);
  StagedInput staged;
  ExecReport report;
  ASSERT_TRUE(stager->stage(VarShapeBatch::wrap(views).view(), &staged, &report).is_ok());
  ASSERT_TRUE(staged.on_device);
  ASSERT_TRUE(fault_configure("provider:1").is_ok());
  std::vector<HostTensor> outputs;
  const Status st = stager->run(staged, &outputs);
  ASSERT_TRUE(fault_configure("").is_ok());
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  EXPECT_EQ(session.value()->report().provider, "cpu");
  EXPECT_EQ(session.value()->device_backend(), nullptr);
  ASSERT_FALSE(outputs.empty());
  const HostTensor& t = outputs[0];
  // The CUDA preprocess's input on the CPU provider: the preprocess kernels match the CPU's within float rounding.
  test::expect_rows_close(Tensor{t.name, t.shape, std::vector<float>(t.values().begin(), t.values().end())},
                          cpu_outputs[0], shape[0]);
}

// Outputs left in device memory: not before a run of this input size taught the session their shapes; then the
// provider writes them there, equal to the host-bound run's; a block a consumer still holds is not written again.
TEST_F(StagedOnCuda, OutputsLeftOnTheDeviceAreTheBoundRunsOutputs) {
  OpExecutor executor;
  StagedInput staged;
  ASSERT_NO_FATAL_FAILURE(gpu_staged(executor, &staged));
  std::vector<DeviceTensor> on_device;
  const Status early = stager->run_to_device(staged, &on_device);
  EXPECT_EQ(early.code(), Errc::kNotImplemented) << early.to_string();
  EXPECT_NE(early.message().find("not known"), std::string::npos) << early.to_string();
  std::vector<HostTensor> bound;
  ASSERT_TRUE(stager->run(staged, &bound).is_ok());
  const Status ran = stager->run_to_device(staged, &on_device);
  ASSERT_TRUE(ran.is_ok()) << ran.to_string();
  ASSERT_EQ(on_device.size(), bound.size());
  EXPECT_EQ(on_device[0].shape, bound[0].shape);
  std::vector<float> got(static_cast<size_t>(on_device[0].elements()));
  ASSERT_TRUE(session->device_backend()->device_download(on_device[0].data(), got.data(),
                                                                 got.size() * sizeof(float)).is_ok());
  test::expect_rows_close(Tensor{on_device[0].name, on_device[0].shape, got}, cpu_outputs[0], shape[0]);
  EXPECT_EQ(session->report().device_output_runs, 1);

  const std::shared_ptr<DeviceBlock> held = on_device[0].memory;  // a consumer still reads it
  ASSERT_TRUE(stager->run_to_device(staged, &on_device).is_ok());
  EXPECT_NE(on_device[0].memory.get(), held.get());
  const DeviceBlock* const free_block = on_device[0].memory.get();
  ASSERT_TRUE(stager->run_to_device(staged, &on_device).is_ok());
  EXPECT_EQ(on_device[0].memory.get(), free_block) << "held only by the caller's tensor: written again";
}

TEST_F(StagedOnCuda, RunningOutOfMemoryThereComesBackAsItIsAndIsNotHalved) {
  OpExecutor executor;
  StagedInput staged;
  ASSERT_NO_FATAL_FAILURE(gpu_staged(executor, &staged));
  std::vector<HostTensor> bound;
  ASSERT_TRUE(stager->run(staged, &bound).is_ok());
  ASSERT_TRUE(fault_configure("provider_oom:1").is_ok());
  std::vector<DeviceTensor> on_device;
  const Status st = stager->run_to_device(staged, &on_device);
  ASSERT_TRUE(fault_configure("").is_ok());
  EXPECT_EQ(st.code(), Errc::kOutOfMemory) << st.to_string();
  EXPECT_EQ(session->report().oom_halvings, 0);
  EXPECT_EQ(session->report().provider, "cuda");
  EXPECT_TRUE(stager->run_to_device(staged, &on_device).is_ok());
}

}  // namespace
}  // namespace kiln
