// Several threads running one InferSession (issue 38.13): ONNX Runtime's Run is thread-safe, so runs overlap instead
// of queueing behind one lock; their outputs are the serial ones; a provider that fails under concurrent runs is
// replaced once, and every run goes on on its successor. On CUDA (issue 58.6) runs of one session take turns (one
// stream and one cuDNN handle): four threads' runs there agree with the CPU's, with no fallback to hide a failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "common/gpu_required.h"
#include "core/fault.h"
#include "infer/host_tensor.h"
#include "infer/infer_test_util.h"
#include "kiln/device.h"
#include "kiln/infer.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;

// `input` (items of `shape`) repeated to `batch` items.
std::vector<float> repeated(const std::vector<float>& input, const std::vector<int64_t>& shape, int64_t batch,
                            std::vector<int64_t>* out_shape) {
  const size_t item = input.size() / static_cast<size_t>(shape[0]);
  std::vector<float> out;
  for (int64_t i = 0; i < batch; ++i) {
    const size_t from = (static_cast<size_t>(i) % static_cast<size_t>(shape[0])) * item;
    out.insert(out.end(), input.begin() + static_cast<std::ptrdiff_t>(from),
               input.begin() + static_cast<std::ptrdiff_t>(from + item));
  }
  *out_shape = shape;
  (*out_shape)[0] = batch;
  return out;
}

class SessionConcurrency : public ::testing::Test {
 protected:
  void SetUp() override {
    model = test::packaged_model_require("fr-embed");
    input = test::model_input_make(model, test::photos_decode(), &shape);
  }
  PackagedModel model;
  std::vector<int64_t> shape;
  std::vector<float> input;
};

TEST_F(SessionConcurrency, AShortRunEndsWhileALongOneIsStillRunning) {
  InferOptions options = test::cpu_infer_options();
  options.threads = 1;
  auto session = InferSession::open(model.file, options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  InferSession& s = *session.value();
  std::vector<int64_t> long_shape;
  const std::vector<float> long_input = repeated(input, shape, 160, &long_shape);
  std::atomic<bool> long_started{false};
  std::atomic<bool> long_done{false};
  Status long_status;
  double long_seconds = 0;
  std::thread long_run([&] {
    std::vector<Tensor> out;
    const auto t = Clock::now();
    long_started = true;
    long_status = s.run(long_input, long_shape, &out);
    long_seconds = std::chrono::duration<double>(Clock::now() - t).count();
    long_done = true;
  });
  while (!long_started) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the long run is in ONNX Runtime by now
  std::vector<int64_t> one_shape;
  const std::vector<float> one = repeated(input, shape, 1, &one_shape);
  std::vector<Tensor> out;
  const Status short_status = s.run(one, one_shape, &out);
  const bool short_ended_first = !long_done;
  long_run.join();
  ASSERT_TRUE(short_status.is_ok()) << short_status.to_string();
  ASSERT_TRUE(long_status.is_ok()) << long_status.to_string();
  // One lock around every run made the short one wait for the long one to end.
  EXPECT_TRUE(short_ended_first) << "the long run took " << long_seconds << " s";
}

// Each thread's outputs are the ones a single thread gets, copied and bound outputs alike.
TEST_F(SessionConcurrency, FourThreadsGetTheSerialOutputs) {
  InferOptions options = test::cpu_infer_options();
  options.threads = 1;  // the same sums in the same order in every run
  auto session = InferSession::open(model.file, options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  InferSession& s = *session.value();
  std::vector<std::vector<float>> inputs(4);
  std::vector<std::vector<int64_t>> shapes(4);
  std::vector<std::vector<float>> want(4);
  for (int64_t t = 0; t < 4; ++t) {
    inputs[t] = repeated(input, shape, t + 1, &shapes[t]);
    std::vector<Tensor> out;
    ASSERT_TRUE(s.run(inputs[t], shapes[t], &out).is_ok());
    want[t] = out[0].data;
  }
  std::atomic<int> mismatches{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int64_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 6; ++r) {
        if (r % 2 == 0) {
          std::vector<Tensor> out;
          if (!s.run(inputs[t], shapes[t], &out).is_ok()) ++failures;
          else if (out[0].data != want[t]) ++mismatches;
        } else {
          std::vector<HostTensor> out;
          if (!s.run_bound(inputs[t], shapes[t], &out).is_ok()) {
            ++failures;
          } else {
            const float* got = out[0].data();
            if (!std::equal(want[t].begin(), want[t].end(), got)) ++mismatches;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

// Given kiln's stream, ONNX Runtime runs a session's runs on one stream with one cuDNN handle, which two threads may
// not use at once: concurrent runs take turns. Without a fallback, a run that failed is counted, not rerun on the CPU.
TEST_F(SessionConcurrency, OnCudaFourThreadsRunningOneSessionGetTheCpuOutputs) {
  if (!test::cuda_device_present()) KILN_GPU_SKIP("no CUDA device: concurrent runs on the CUDA provider need one");
  const auto providers = onnxruntime_info().providers;
  if (std::find(providers.begin(), providers.end(), "CUDAExecutionProvider") == providers.end()) {
    KILN_GPU_SKIP("this ONNX Runtime has no CUDA provider: configure with -DKILN_ORT_GPU=ON");
  }
  InferOptions options;
  options.threads = test::cpu_infer_options().threads;
  options.fallback_on_error = false;
  auto session = InferSession::open(model.file, options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  InferSession& s = *session.value();
  ASSERT_EQ(s.report().provider, "cuda");
  auto cpu = InferSession::open(model.file, test::cpu_infer_options());
  ASSERT_TRUE(cpu.is_ok());
  std::vector<std::vector<float>> inputs(4);
  std::vector<std::vector<int64_t>> shapes(4);
  std::vector<std::vector<Tensor>> want(4);
  for (int64_t t = 0; t < 4; ++t) {
    inputs[t] = repeated(input, shape, t + 1, &shapes[t]);
    ASSERT_TRUE(cpu.value()->run(inputs[t], shapes[t], &want[t]).is_ok());
  }
  std::atomic<int> failures{0};
  std::vector<std::vector<Tensor>> copied(4);
  std::vector<std::vector<Tensor>> bound(4);  // the last bound run's first output, copied out of its block
  std::vector<std::thread> threads;
  for (int64_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 8; ++r) {
        if (r % 2 == 0) {
          if (!s.run(inputs[t], shapes[t], &copied[t]).is_ok()) ++failures;
          continue;
        }
        std::vector<HostTensor> out;
        if (!s.run_bound(inputs[t], shapes[t], &out).is_ok()) {
          ++failures;
          continue;
        }
        Tensor first;
        first.shape = out[0].shape;
        first.data.assign(out[0].values().begin(), out[0].values().end());
        bound[t] = {first};
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  const InferReport report = s.report();
  EXPECT_EQ(report.provider, "cuda");
  EXPECT_TRUE(report.fallbacks.empty());
  EXPECT_GT(report.bound_runs, 0);
  for (int64_t t = 0; t < 4; ++t) {
    ASSERT_FALSE(copied[t].empty());
    ASSERT_FALSE(bound[t].empty());
    test::expect_rows_close(copied[t][0], want[t][0], shapes[t][0]);
    test::expect_rows_close(bound[t][0], want[t][0], shapes[t][0]);
  }
}

TEST_F(SessionConcurrency, OnCudaAFailureUnderConcurrentRunsFallsBackOnceAndEveryRunSucceeds) {
  if (!test::cuda_device_present()) KILN_GPU_SKIP("no CUDA device: the CUDA provider's fallback under load needs one");
  const auto providers = onnxruntime_info().providers;
  if (std::find(providers.begin(), providers.end(), "CUDAExecutionProvider") == providers.end()) {
    KILN_GPU_SKIP("this ONNX Runtime has no CUDA provider: configure with -DKILN_ORT_GPU=ON");
  }
  InferOptions options;
  options.threads = test::cpu_infer_options().threads;
  auto session = InferSession::open(model.file, options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  ASSERT_EQ(session.value()->report().provider, "cuda");
  auto cpu = InferSession::open(model.file, test::cpu_infer_options());
  ASSERT_TRUE(cpu.is_ok());
  std::vector<Tensor> cpu_outputs;
  ASSERT_TRUE(cpu.value()->run(input, shape, &cpu_outputs).is_ok());
  ASSERT_TRUE(fault_configure("provider:5").is_ok());
  std::atomic<int> failures{0};
  std::vector<std::vector<Tensor>> last(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 5; ++r) {
        if (!session.value()->run(input, shape, &last[t]).is_ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(fault_configure("").is_ok());
  EXPECT_EQ(failures.load(), 0);
  const InferReport report = session.value()->report();
  EXPECT_EQ(report.provider, "cpu");
  EXPECT_EQ(report.fallbacks.size(), 1u);
  // A run that started on CUDA before the replacement ends there: each last run is CUDA's or the CPU's.
  for (const auto& out : last) test::expect_rows_close(out[0], cpu_outputs[0], shape[0]);
}

}  // namespace
}  // namespace kiln
