// OomHalving on its own: a batch that runs out of memory is run in halves, recursively, the rows joined in order,
// and later batches larger than what fitted are split at once; outputs without a row per item cannot be joined.
#include <gtest/gtest.h>

#include <numeric>

#include "infer/oom_halving.h"
#include "infer/ort_env.h"

namespace kiln {
namespace {

// A device that fits at most `fits` items: each output row is its input item (one float per item).
struct Device {
  int64_t fits = 3;
  std::vector<int64_t> attempts;  // batch sizes tried, in order
  Status run(std::span<const float> in, const std::vector<int64_t>& shape, std::vector<Tensor>* out) {
    attempts.push_back(shape[0]);
    if (shape[0] > fits) return Status(Errc::kOutOfMemory, "out of memory");
    *out = {Tensor{"rows", {shape[0], 1}, std::vector<float>(in.begin(), in.end())}};
    return Status::ok();
  }
};

Status halving_run(OomHalving& halving, Device& device, const std::vector<float>& input, std::vector<Tensor>* out,
                   std::vector<int64_t>* limits) {
  return halving.run<Tensor>(
      input, {static_cast<int64_t>(input.size()), 1}, out,
      [&](std::span<const float> in, const std::vector<int64_t>& s, std::vector<Tensor>* o) {
        return device.run(in, s, o);
      },
      [](const std::vector<Tensor>& a, int64_t na, const std::vector<Tensor>& b, int64_t nb, std::vector<Tensor>* o) {
        return tensors_join(a, na, b, nb, "test", o);
      },
      [&](int64_t limit) { limits->push_back(limit); });
}

TEST(OomHalving, HalvesUntilItFitsAndKeepsTheRowsInOrder) {
  std::vector<float> input(10);
  std::iota(input.begin(), input.end(), 0.0f);
  OomHalving halving;
  Device device;
  std::vector<Tensor> out;
  std::vector<int64_t> limits;
  ASSERT_TRUE(halving_run(halving, device, input, &out, &limits).is_ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{10, 1}));
  EXPECT_EQ(out[0].data, input);
  // 10 fails, 5 (its first half) fails and sets the limit to 3: 2, 3, then 5 = 2 + 3 split at once.
  EXPECT_EQ(device.attempts, (std::vector<int64_t>{10, 5, 2, 3, 2, 3}));
  EXPECT_EQ(limits, (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(halving.limit(), 3);

  device.attempts.clear();
  ASSERT_TRUE(halving_run(halving, device, input, &out, &limits).is_ok());
  EXPECT_EQ(device.attempts, (std::vector<int64_t>{2, 3, 2, 3})) << "nothing over the limit is tried whole";
  EXPECT_EQ(out[0].data, input);
  halving.reset();
  EXPECT_EQ(halving.limit(), 0);
}

TEST(OomHalving, ASingleItemThatDoesNotFitIsTheCallersError) {
  OomHalving halving;
  Device device;
  device.fits = 0;
  std::vector<Tensor> out;
  std::vector<int64_t> limits;
  const Status st = halving_run(halving, device, {1.0f, 2.0f}, &out, &limits);
  EXPECT_EQ(st.code(), Errc::kOutOfMemory);
  EXPECT_EQ(device.attempts, (std::vector<int64_t>{2, 1}));
}

TEST(OomHalving, OutputsWithoutARowPerItemCannotBeJoined) {
  const std::vector<Tensor> a = {Tensor{"pooled", {1, 4}, std::vector<float>(4)}};
  const std::vector<Tensor> b = {Tensor{"pooled", {1, 4}, std::vector<float>(4)}};
  std::vector<Tensor> out;
  EXPECT_TRUE(tensors_join(a, 1, b, 1, "m", &out).is_ok());
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 4}));
  const Status st = tensors_join(a, 2, b, 1, "m", &out);  // the first half had two items but one row
  EXPECT_EQ(st.code(), Errc::kUnsupportedFormat);
  EXPECT_NE(st.message().find("m: output pooled has no row per item"), std::string::npos) << st.message();
}

// What makes a provider's failure a halving instead of a fallback: its allocator's messages become OutOfMemory.
TEST(OomHalving, ProviderAllocatorFailuresAreOutOfMemory) {
  const auto thrown = [](const char* text) {
    return ort_call(Errc::kDeviceError, "run", [&] { throw Ort::Exception(text, ORT_FAIL); });
  };
  EXPECT_EQ(thrown("Failed to allocate memory for requested buffer of size 1048576").code(), Errc::kOutOfMemory);
  EXPECT_EQ(thrown("CUDA failure 2: out of memory ; GPU=0").code(), Errc::kOutOfMemory);
  // The arena at GPU_MEMORY_LIMIT_GB (gpu_mem_limit), and cuBLAS's workspace.
  EXPECT_EQ(thrown("BFCArena::AllocateRawInternal Available memory of 34699008 is smaller than requested bytes of "
                   "945041920").code(),
            Errc::kOutOfMemory);
  EXPECT_EQ(thrown("CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED ; GPU=0").code(), Errc::kOutOfMemory);
  const Status other = thrown("Non-zero status code returned while running Conv node");
  EXPECT_EQ(other.code(), Errc::kDeviceError);
  EXPECT_EQ(other.message(), "run: Non-zero status code returned while running Conv node");
}

}  // namespace
}  // namespace kiln
