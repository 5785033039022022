// Memory another library read on its own stream (a DLPack consumer) goes back to kiln's CUDA pool only once those
// reads are done, and the release does not make the consumer wait for the whole device where its stream is ordered
// with the legacy default stream (issue 58.5).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "common/gpu_required.h"
#include "kiln/device.h"

#if KILN_HAS_CUDA
#include <cuda_runtime.h>
#endif

namespace kiln {
namespace {

#if KILN_HAS_CUDA
std::unique_ptr<Backend> cuda_or_skip_reason(std::string* reason) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    *reason = "no CUDA device";
    return nullptr;
  }
  auto created = cuda_backend_create(BackendOptions{});
  if (!created.is_ok()) {
    *reason = created.status().to_string();
    return nullptr;
  }
  return std::move(created.value());
}

void* stream_value(uintptr_t dlpack) { return reinterpret_cast<void*>(dlpack); }
#endif

TEST(CudaForeignReads, StreamsOrderedWithTheDefaultStreamAreToldApart) {
#if KILN_HAS_CUDA
  std::string reason;
  auto cuda = cuda_or_skip_reason(&reason);
  if (!cuda) KILN_GPU_SKIP(reason);
  for (const uintptr_t dlpack : {uintptr_t{1}, uintptr_t{2}}) {
    auto described = cuda->foreign_stream_describe(stream_value(dlpack));
    ASSERT_TRUE(described.is_ok()) << described.status().to_string();
    EXPECT_TRUE(described.value().ordered_with_default) << "stream " << dlpack;
  }
  cudaStream_t blocking = nullptr;
  cudaStream_t non_blocking = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&blocking, cudaStreamDefault), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&non_blocking, cudaStreamNonBlocking), cudaSuccess);
  auto ordered = cuda->foreign_stream_describe(blocking);
  auto unordered = cuda->foreign_stream_describe(non_blocking);
  ASSERT_TRUE(ordered.is_ok() && unordered.is_ok());
  EXPECT_TRUE(ordered.value().ordered_with_default);
  EXPECT_FALSE(unordered.value().ordered_with_default);

  // A non-blocking stream's reader: the memory is let go once the device is idle, before the release returns.
  auto kept = std::make_shared<int>(1);
  const std::weak_ptr<int> seen = kept;
  cuda->release_after_foreign_reads(unordered.value(), std::move(kept));
  EXPECT_TRUE(seen.expired());
  EXPECT_EQ(cudaStreamDestroy(blocking), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(non_blocking), cudaSuccess);
#else
  KILN_GPU_SKIP("cuda: not compiled into this build");
#endif
}

#if KILN_HAS_CUDA
void CUDART_CB wait_for_flag(void* flag) {
  while (!static_cast<std::atomic<bool>*>(flag)->load()) {
  }
}
#endif

// The reader's work is still queued (a host function that waits for the test) when it lets the memory go: the
// release returns at once, the memory stays out of the pool until that work is done, then the next acquire frees it.
TEST(CudaForeignReads, MemoryWaitsForTheReadersQueuedWorkWithoutBlockingTheRelease) {
#if KILN_HAS_CUDA
  std::string reason;
  auto cuda = cuda_or_skip_reason(&reason);
  if (!cuda) KILN_GPU_SKIP(reason);
  cudaStream_t reader = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&reader, cudaStreamDefault), cudaSuccess);
  auto described = cuda->foreign_stream_describe(reader);
  ASSERT_TRUE(described.is_ok()) << described.status().to_string();

  std::atomic<bool> reads_done{false};
  ASSERT_EQ(cudaLaunchHostFunc(reader, wait_for_flag, &reads_done), cudaSuccess);
  auto kept = std::make_shared<int>(2);
  const std::weak_ptr<int> seen = kept;
  cuda->release_after_foreign_reads(described.value(), std::move(kept));  // returns while the reads are queued
  auto block = cuda->device_acquire(256);
  ASSERT_TRUE(block.is_ok()) << block.status().to_string();
  cuda->device_release(block.value());
  EXPECT_FALSE(seen.expired()) << "let go while the reader's work was still queued";

  reads_done = true;
  ASSERT_EQ(cudaStreamSynchronize(reader), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  block = cuda->device_acquire(256);
  ASSERT_TRUE(block.is_ok()) << block.status().to_string();
  cuda->device_release(block.value());
  EXPECT_TRUE(seen.expired()) << "kept after the reader's work was done";
  EXPECT_EQ(cudaStreamDestroy(reader), cudaSuccess);
#else
  KILN_GPU_SKIP("cuda: not compiled into this build");
#endif
}

}  // namespace
}  // namespace kiln
