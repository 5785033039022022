// The CUDA backend beyond pixel parity (render_parity_test.cpp): device info, buffer pool reuse, the memory limit,
// injected faults, concurrent callers, pinned outputs, f32. Without a CUDA device every test but the factory's is
// SKIPPED with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "backend_ops/test_backends.h"
#include "common/render_helpers.h"
#include "core/buffer_pool.h"
#include "core/fault.h"
#include "kiln/device.h"
#include "kiln/image_ops.h"

namespace kiln {
namespace {

// A random-walk series: `channels` = 1 (close only) or 4 (Open, High, Low, Close).
std::vector<float> random_series(int64_t rows, int32_t channels, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> series;
  float close = 100.0f;
  for (int64_t i = 0; i < rows; ++i) {
    const float open = close;
    close += normal(rng);
    if (channels == 1) {
      series.push_back(close);
    } else {
      const float wick = std::abs(normal(rng)) * 0.5f;
      series.insert(series.end(), {open, std::max(open, close) + wick, std::min(open, close) - wick, close});
    }
  }
  return series;
}

// Windows to render with `params`.
struct Batch : test::SeriesWindows {
  RenderParams params;

  WindowBatch windows() const { return SeriesWindows::view(); }
  size_t image_bytes() const {
    return static_cast<size_t>(params.width) * static_cast<size_t>(params.height) * pixel_type_size(params.dtype);
  }
  size_t bytes() const { return image_bytes() * starts.size(); }
  // A packed view of `count` images at `data` (or image_stride apart, when given).
  BatchView view(void* data, int64_t image_stride = 0) const {
    return BatchView{data,           static_cast<int64_t>(starts.size()),
                     params.width,   params.height,
                     1,              params.dtype,
                     image_stride > 0 ? image_stride : static_cast<int64_t>(image_bytes())};
  }
};

Batch make_batch(ChartStyle style, int32_t width, int32_t height, int32_t seq_len, int32_t count, uint64_t seed,
                 PixelType dtype = PixelType::kU8) {
  Batch b;
  b.params.style = style;
  b.params.width = width;
  b.params.height = height;
  b.params.line_width = 2.5f;
  b.params.dtype = dtype;
  b.channels = style == ChartStyle::kOhlc ? 4 : 1;
  b.seq_len = seq_len;
  const int64_t stride = 3;
  b.series = random_series(static_cast<int64_t>(count) * stride + seq_len, b.channels, seed);
  for (int32_t i = 0; i < count; ++i) b.starts.push_back(static_cast<int64_t>(i) * stride);
  return b;
}

std::vector<uint8_t> render_to_vector(Backend& backend, const Batch& b, Status* status,
                                      OpTimings* timings = nullptr) {
  std::vector<uint8_t> out(b.bytes(), 0xAB);
  *status = test::render_on(backend, b.params, b.windows(), b.view(out.data()), timings);
  return out;
}

std::vector<uint8_t> render_cpu_reference(const Batch& b) {
  auto cpu = cpu_backend_create();
  Status status;
  auto out = render_to_vector(*cpu, b, &status);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return out;
}

using CudaBackendTest = test::GpuBackendTest<BackendKind::kCuda>;

// Runs everywhere: without a driver or device the factory explains why, without crashing or printing.
TEST(CudaBackendFactory, ReportsWhyNoDeviceIsUsable) {
#if KILN_HAS_CUDA
  auto created = cuda_backend_create(BackendOptions{});
  if (created.is_ok()) {
    EXPECT_EQ(created.value()->kind(), BackendKind::kCuda);
  } else {
    EXPECT_EQ(created.status().code(), Errc::kDeviceError);
    EXPECT_FALSE(created.status().message().empty());
    std::printf("cuda_backend_create: %s\n", created.status().to_string().c_str());
  }
  // Asking again gives the same answer (no sticky error state left behind).
  auto again = cuda_backend_create(BackendOptions{});
  EXPECT_EQ(again.is_ok(), created.is_ok());
  EXPECT_EQ(again.status().message(), created.status().message());
  // A device index past the last device is refused, with or without a GPU.
  BackendOptions far;
  far.device_id = 4096;
  auto refused = cuda_backend_create(far);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_FALSE(refused.status().message().empty());
  if (created.is_ok()) {
    EXPECT_EQ(refused.status().code(), Errc::kInvalidArgument);
  }
#else
  KILN_GPU_SKIP("cuda: not compiled into this build");
#endif
}

TEST_F(CudaBackendTest, Identity) {
  EXPECT_EQ(backend().kind(), BackendKind::kCuda);
  EXPECT_EQ(backend().name(), "cuda");
  EXPECT_TRUE(backend().is_gpu());
  RenderParams params;
  EXPECT_TRUE(test::render_supported(backend(), params));
  params.style = ChartStyle::kOhlc;
  params.dtype = PixelType::kF32;
  EXPECT_TRUE(test::render_supported(backend(), params, 4));
}

TEST_F(CudaBackendTest, DeviceInfo) {
  const Batch b = make_batch(ChartStyle::kLine, 128, 64, 40, 4, 1);
  Status status;
  (void)render_to_vector(backend(), b, &status);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  const auto devices = backend().devices();
  ASSERT_EQ(devices.size(), 1u);
  const DeviceInfo& d = devices[0];
  EXPECT_FALSE(d.name.empty());
  EXPECT_EQ(d.vendor, "NVIDIA");
  EXPECT_EQ(d.version.rfind("sm_", 0), 0u) << d.version;
  EXPECT_GT(d.total_memory, 0);
  EXPECT_GT(d.free_memory, 0);
  EXPECT_LE(d.free_memory, d.total_memory);
  EXPECT_GT(d.compute_units, 0);
  EXPECT_GT(d.pool_bytes, 0);  // the render above left its block cached
  EXPECT_EQ(static_cast<size_t>(d.pool_bytes), backend().memory_stats().held_bytes);
}

TEST_F(CudaBackendTest, MatchesCpuLineAndOhlc) {
  for (ChartStyle style : {ChartStyle::kLine, ChartStyle::kOhlc}) {
    SCOPED_TRACE(chart_style_name(style));
    const Batch b = make_batch(style, 300, 120, 60, 7, 2);
    Status status;
    const auto actual = render_to_vector(backend(), b, &status);
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    EXPECT_EQ(actual, render_cpu_reference(b));
  }
}

TEST_F(CudaBackendTest, UnorderedStartsAndCloseOfOhlcData) {
  // Windows out of order and away from row 0 (the upload starts at the smallest start); a line over OHLC data
  // draws the close.
  Batch b = make_batch(ChartStyle::kLine, 160, 90, 50, 1, 3);
  b.channels = 4;
  b.series = random_series(400, 4, 3);
  b.starts = {250, 17, 120, 17, 349};
  Status status;
  const auto actual = render_to_vector(backend(), b, &status);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  EXPECT_EQ(actual, render_cpu_reference(b));
}

TEST_F(CudaBackendTest, Float32Output) {
  for (ChartStyle style : {ChartStyle::kLine, ChartStyle::kOhlc}) {
    SCOPED_TRACE(chart_style_name(style));
    Batch b = make_batch(style, 200, 100, 50, 5, 4, PixelType::kF32);
    b.params.background = 240;
    b.params.ink = 10;
    Status status;
    const auto actual = render_to_vector(backend(), b, &status);
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    EXPECT_EQ(actual, render_cpu_reference(b));  // bit-identical floats
  }
}

TEST_F(CudaBackendTest, ManyImagesAndLargeImages) {
  // More images than the grid's z dimension holds (the kernels loop over the rest); an image larger than one tile
  // both ways; a narrow image with more segments per column than the kernel caches.
  const Batch many = make_batch(ChartStyle::kLine, 8, 4, 6, 70000, 5);
  const Batch many_bars = make_batch(ChartStyle::kOhlc, 8, 4, 6, 70000, 5);
  const Batch large = make_batch(ChartStyle::kLine, 1500, 700, 400, 2, 6);
  const Batch dense = make_batch(ChartStyle::kLine, 300, 200, 2000, 3, 7);
  for (const Batch* b : {&many, &many_bars, &large, &dense}) {
    Status status;
    const auto actual = render_to_vector(backend(), *b, &status);
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    EXPECT_EQ(actual, render_cpu_reference(*b));
  }
}

TEST_F(CudaBackendTest, EmptyBatchAndBadOutput) {
  Batch b = make_batch(ChartStyle::kLine, 64, 32, 20, 2, 7);
  const auto starts = b.starts;
  b.starts.clear();
  Status status;
  (void)render_to_vector(backend(), b, &status);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  b.starts = starts;
  std::vector<uint8_t> out(b.bytes());
  BatchView view = b.view(out.data());
  view.width = 63;
  EXPECT_EQ(test::render_on(backend(), b.params, b.windows(), view).code(), Errc::kInvalidArgument);
  b.params.style = ChartStyle::kOhlc;  // one channel cannot be drawn as bars
  EXPECT_EQ(test::render_on(backend(), b.params, b.windows(), b.view(out.data())).code(), Errc::kInvalidArgument);
}

TEST_F(CudaBackendTest, PoolReusesBlocksAcrossRenders) {
  const Batch b = make_batch(ChartStyle::kLine, 224, 224, 100, 16, 8);
  Status status;
  const auto first = render_to_vector(backend(), b, &status);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  const PoolStats after_first = backend().memory_stats();
  EXPECT_GT(after_first.allocations, 0u);
  EXPECT_EQ(after_first.in_use_bytes, 0u);
  for (int round = 0; round < 5; ++round) {
    EXPECT_EQ(render_to_vector(backend(), b, &status), first);
    ASSERT_TRUE(status.is_ok()) << status.to_string();
  }
  const PoolStats after = backend().memory_stats();
  EXPECT_EQ(after.allocations, after_first.allocations);
  EXPECT_GE(after.reuses, after_first.reuses + 5);
  EXPECT_EQ(after.held_bytes, after_first.held_bytes);
  EXPECT_EQ(after.in_use_bytes, 0u);
}

TEST_F(CudaBackendTest, MemoryLimitIsRespected) {
  constexpr uint64_t kLimit = uint64_t{4} << 20;
  auto limited = test::gpu_backend_for_test(BackendKind::kCuda, kLimit);
  ASSERT_TRUE(limited.is_ok()) << limited.status().to_string();
  Backend& gpu = *limited.value();
  // 96 images of 256x256 u8 need 6 MiB of output alone.
  const Batch big = make_batch(ChartStyle::kLine, 256, 256, 60, 96, 9);
  Status status;
  (void)render_to_vector(gpu, big, &status);
  EXPECT_EQ(status.code(), Errc::kOutOfMemory) << status.to_string();
  // A quarter of it fits, and renders correctly.
  const Batch small = make_batch(ChartStyle::kLine, 256, 256, 60, 24, 9);
  const auto actual = render_to_vector(gpu, small, &status);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  EXPECT_EQ(actual, render_cpu_reference(small));
  const PoolStats stats = gpu.memory_stats();
  EXPECT_EQ(stats.budget, kLimit);
  EXPECT_LE(stats.peak_held_bytes, kLimit);
  EXPECT_LE(stats.held_bytes, kLimit);
  EXPECT_EQ(stats.in_use_bytes, 0u);
}

// The limit bounds the backend's pool: host images larger than it are refused, device images (used in place, never
// pooled) are not.
TEST_F(CudaBackendTest, MemoryLimitOnlyBoundsHostImages) {
  auto limited = test::gpu_backend_for_test(BackendKind::kCuda, 1024);
  ASSERT_TRUE(limited.is_ok()) << limited.status().to_string();
  std::vector<uint8_t> pixels(64 * 64 * 3), gray(64 * 64);  // only descriptors are looked at
  const ImageView in = image_view_packed(pixels.data(), 64, 64, 3, PixelType::kU8);
  const ImageView out = image_view_packed(gray.data(), 64, 64, 1, PixelType::kU8);
  ColorParams params;
  params.conversion = ColorConversion::kRgbToGray;
  const OpCall host{OpKind::kColor, &params, {&in, 1, MemorySpace::kHost}, {&out, 1, MemorySpace::kHost}};
  const OpCall device{OpKind::kColor, &params, {&in, 1, MemorySpace::kDevice}, {&out, 1, MemorySpace::kDevice}};
  EXPECT_FALSE(limited.value()->supports(host));
  EXPECT_TRUE(limited.value()->supports(device));
}

TEST_F(CudaBackendTest, InjectedFaults) {
  const Batch b = make_batch(ChartStyle::kOhlc, 150, 80, 40, 6, 10);
  const auto expected = render_cpu_reference(b);
  Status status;
  ASSERT_TRUE(fault_configure("alloc:1").is_ok());
  (void)render_to_vector(backend(), b, &status);
  EXPECT_EQ(status.code(), Errc::kOutOfMemory) << status.to_string();
  EXPECT_EQ(render_to_vector(backend(), b, &status), expected);  // only the first allocation fails
  EXPECT_TRUE(status.is_ok()) << status.to_string();

  ASSERT_TRUE(fault_configure("kernel:1").is_ok());
  (void)render_to_vector(backend(), b, &status);
  EXPECT_EQ(status.code(), Errc::kDeviceError) << status.to_string();
  ASSERT_TRUE(fault_configure("kernel:2").is_ok());  // the render kernel, after the setup kernel ran
  (void)render_to_vector(backend(), b, &status);
  EXPECT_EQ(status.code(), Errc::kDeviceError) << status.to_string();

  ASSERT_TRUE(fault_configure("").is_ok());
  EXPECT_EQ(render_to_vector(backend(), b, &status), expected);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  EXPECT_EQ(backend().memory_stats().in_use_bytes, 0u);  // failed calls gave their blocks back
}

TEST_F(CudaBackendTest, ConcurrentThreadsMatchSerial) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 8;
  std::vector<Batch> batches;
  std::vector<std::vector<uint8_t>> serial;
  for (int t = 0; t < kThreads; ++t) {
    batches.push_back(make_batch(t % 2 == 0 ? ChartStyle::kLine : ChartStyle::kOhlc, 160 + 16 * t, 96, 64, 10,
                                 100 + static_cast<uint64_t>(t)));
    Status status;
    serial.push_back(render_to_vector(backend(), batches.back(), &status));
    ASSERT_TRUE(status.is_ok()) << status.to_string();
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<Status> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        Status status;
        const auto out = render_to_vector(backend(), batches[t], &status);
        if (!status.is_ok()) failures[t] = status;
        if (out != serial[t]) ++mismatches[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(failures[t].is_ok()) << "thread " << t << ": " << failures[t].to_string();
    EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  }
  EXPECT_EQ(serial[0], render_cpu_reference(batches[0]));
}

TEST_F(CudaBackendTest, PinnedAndStridedOutputs) {
  const Batch b = make_batch(ChartStyle::kLine, 120, 70, 45, 6, 11);
  const auto expected = render_cpu_reference(b);
  const int64_t image_bytes = static_cast<int64_t>(b.image_bytes());
  const int64_t padded = image_bytes + 100;

  // Packed, in a pinned block: downloaded straight into it.
  auto block = backend().host_acquire(b.bytes());
  ASSERT_TRUE(block.is_ok()) << block.status().to_string();
  ASSERT_GE(block.value().bytes, b.bytes());
  void* pinned = reinterpret_cast<void*>(block.value().handle);
  std::memset(pinned, 0xAB, b.bytes());
  ASSERT_TRUE(test::render_on(backend(), b.params, b.windows(), b.view(pinned)).is_ok());
  EXPECT_EQ(std::memcmp(pinned, expected.data(), expected.size()), 0);
  backend().host_release(block.value());

  // Strided images, pinned (2D copy) and pageable (staged), leave the gaps untouched.
  const size_t strided_bytes = static_cast<size_t>(padded) * b.starts.size();
  auto strided_block = backend().host_acquire(strided_bytes);
  ASSERT_TRUE(strided_block.is_ok()) << strided_block.status().to_string();
  std::vector<uint8_t> pageable(strided_bytes);
  for (uint8_t* data : {reinterpret_cast<uint8_t*>(strided_block.value().handle), pageable.data()}) {
    std::memset(data, 0xCD, strided_bytes);
    ASSERT_TRUE(test::render_on(backend(), b.params, b.windows(), b.view(data, padded)).is_ok());
    for (size_t i = 0; i < b.starts.size(); ++i) {
      EXPECT_EQ(std::memcmp(data + i * padded, expected.data() + i * image_bytes, image_bytes), 0) << "image " << i;
      for (int64_t j = image_bytes; j < padded; ++j) ASSERT_EQ(data[i * padded + j], 0xCD);
    }
  }
  backend().host_release(strided_block.value());
}

TEST_F(CudaBackendTest, ReportsTimings) {
  const Batch b = make_batch(ChartStyle::kLine, 800, 500, 100, 8, 12);
  OpTimings timings;
  timings.kernel_ms = -1.0;
  Status status;
  (void)render_to_vector(backend(), b, &status, &timings);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  for (double ms : {timings.upload_ms, timings.kernel_ms, timings.download_ms}) {
    EXPECT_TRUE(std::isfinite(ms));
    EXPECT_GE(ms, 0.0);
  }
  EXPECT_GT(timings.kernel_ms + timings.download_ms, 0.0);
}

}  // namespace
}  // namespace kiln
