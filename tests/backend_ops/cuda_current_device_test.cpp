// kiln's CUDA calls leave the caller's current device current (issue 58.8): a multi-GPU caller whose thread works on
// device 0 while kiln's backend is on another (GPU_DEVICE_ID) keeps device 0 after each call. The backend goes on
// the last device; on a machine with one device both are device 0 and the calls are checked to leave it current.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/gpu_required.h"
#include "common/image_ops_util.h"
#include "core/buffer_pool.h"
#include "kiln/device.h"
#include "kiln/image_ops.h"
#include "kiln/ops/color.h"

#if KILN_HAS_CUDA
#include <cuda_runtime.h>
#endif

namespace kiln {
namespace {

#if KILN_HAS_CUDA
// The calling thread's current device, or -1.
int current_device_of_caller() {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) return -1;
  return device;
}
#endif

TEST(CudaCurrentDevice, EveryCallLeavesTheCallersDeviceCurrent) {
#if KILN_HAS_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    KILN_GPU_SKIP("no CUDA device");
  }
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const auto expect_caller_device = [](const std::string& after) {
    EXPECT_EQ(current_device_of_caller(), 0) << "after " << after;
  };
  BackendOptions options;
  options.device_id = count - 1;
  auto created = cuda_backend_create(options);
  ASSERT_TRUE(created.is_ok()) << created.status().to_string();
  expect_caller_device("cuda_backend_create");
  Backend& cuda = *created.value();
  (void)cuda.devices();
  expect_caller_device("devices");

  const std::vector<uint8_t> bytes(4096, 7);
  std::vector<uint8_t> back(bytes.size(), 0);
  auto block = cuda.device_acquire(bytes.size());
  ASSERT_TRUE(block.is_ok()) << block.status().to_string();
  expect_caller_device("device_acquire");
  void* device_bytes = reinterpret_cast<void*>(block.value().handle);
  ASSERT_TRUE(cuda.device_upload(bytes.data(), device_bytes, bytes.size()).is_ok());
  expect_caller_device("device_upload");
  ASSERT_TRUE(cuda.device_download(device_bytes, back.data(), back.size()).is_ok());
  expect_caller_device("device_download");
  EXPECT_EQ(back, bytes);
  auto legacy = cuda.foreign_stream_describe(reinterpret_cast<void*>(uintptr_t{1}));
  ASSERT_TRUE(legacy.is_ok()) << legacy.status().to_string();
  expect_caller_device("foreign_stream_describe");
  cuda.release_after_foreign_reads(legacy.value(), nullptr);
  expect_caller_device("release_after_foreign_reads");
  cuda.device_release(block.value());

  auto pinned = cuda.host_acquire(bytes.size());
  ASSERT_TRUE(pinned.is_ok()) << pinned.status().to_string();
  expect_caller_device("host_acquire");
  cuda.host_release(pinned.value());

  const std::vector<ImageShape> gray = {{37, 23, 1, PixelType::kU8, Layout::kHWC}};
  const std::vector<ImageShape> rgb = {{37, 23, 3, PixelType::kU8, Layout::kHWC}};
  const auto in = test::random_batch(gray, 58);
  const auto out = test::filled_batch(rgb);
  ColorParams params;
  params.conversion = ColorConversion::kGrayToRgb;
  const Status ran = cuda.run(OpCall{OpKind::kColor, &params, in.view(), out.view(), nullptr}, {});
  ASSERT_TRUE(ran.is_ok()) << ran.to_string();
  expect_caller_device("run");
  {
    auto stream = cuda.stream_create();
    ASSERT_TRUE(stream.is_ok()) << stream.status().to_string();
    expect_caller_device("stream_create");
  }
  expect_caller_device("a stream's destruction");
  created.value().reset();
  expect_caller_device("the backend's destruction");
#else
  KILN_GPU_SKIP("cuda: not compiled into this build");
#endif
}

}  // namespace
}  // namespace kiln
