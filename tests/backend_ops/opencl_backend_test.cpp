// The OpenCL backend beyond pixel parity (render_parity_test.cpp): device description, supports(), the buffer pool
// and its memory limit, fault injection, threads, f32 output, strided and host-acquired outputs, timings.
// Runs on any OpenCL device, PoCL included; SKIPPED with the reason when there is none.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "backend_ops/test_backends.h"
#include "core/buffer_pool.h"
#include "core/fault.h"
#include "common/render_helpers.h"
#include "ops/cpu/render_cpu.h"
#if KILN_HAS_OPENCL
#include "ops/opencl/opencl_runtime.h"
#endif

namespace kiln {
namespace {

using TestBatch = test::SeriesWindows;

// Windows of a random walk (1 channel, or 4 OHLC channels), each starting `stride` rows after the previous one.
TestBatch make_batch(int32_t count, int32_t seq_len, int32_t stride = 3, int32_t channels = 1, uint64_t seed = 7) {
  TestBatch b;
  b.channels = channels;
  b.seq_len = seq_len;
  const int64_t rows = static_cast<int64_t>(count - 1) * stride + seq_len + 5;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  float v = 100.0f;
  for (int64_t i = 0; i < rows; ++i) {
    const float open = v;
    v += normal(rng);
    if (channels == 1) {
      b.series.push_back(v);
    } else {
      const float wick = std::abs(normal(rng));
      b.series.insert(b.series.end(), {open, std::max(open, v) + wick, std::min(open, v) - wick, v});
    }
  }
  // Starts offset from 0 and not in order, so the upload's span and relative starts are exercised.
  for (int32_t i = 0; i < count; ++i) b.starts.push_back(5 + static_cast<int64_t>((i * 7) % count) * stride);
  return b;
}

RenderParams line_params(int32_t width, int32_t height, PixelType dtype = PixelType::kU8) {
  RenderParams p;
  p.width = width;
  p.height = height;
  p.line_width = 3.0f;
  p.dtype = dtype;
  return p;
}

size_t image_bytes(const RenderParams& p) {
  return static_cast<size_t>(p.width) * static_cast<size_t>(p.height) * pixel_type_size(p.dtype);
}

BatchView batch_view(void* data, const RenderParams& p, int64_t count, int64_t stride = 0) {
  return BatchView{
      data, count, p.width, p.height, 1, p.dtype, stride > 0 ? stride : static_cast<int64_t>(image_bytes(p))};
}

Status render_into(Backend& backend, const RenderParams& p, const TestBatch& b, std::vector<uint8_t>* out,
                   OpTimings* timings = nullptr) {
  out->assign(image_bytes(p) * b.starts.size(), 0xAB);
  return test::render_on(backend, p, b.view(), batch_view(out->data(), p, static_cast<int64_t>(b.starts.size())),
                         timings);
}

// The CPU reference (scalar variant) of the same batch.
std::vector<uint8_t> render_reference(const RenderParams& p, const TestBatch& b) {
  std::vector<uint8_t> out(image_bytes(p) * b.starts.size(), 0xCD);
  const auto count = static_cast<int64_t>(b.starts.size());
  const RenderCall call(p, b.view(), batch_view(out.data(), p, count));
  scalar::render_images(p, call.call().in, call.call().out, 0, count);
  return out;
}

using OpenclBackendTest = test::GpuBackendTest<BackendKind::kOpenCL>;

TEST_F(OpenclBackendTest, IdentifiesItself) {
  EXPECT_EQ(m_backend->kind(), BackendKind::kOpenCL);
  EXPECT_EQ(m_backend->name(), "opencl");
  EXPECT_TRUE(m_backend->is_gpu());
}

TEST_F(OpenclBackendTest, DescribesItsDevice) {
  auto devices = m_backend->devices();
  ASSERT_EQ(devices.size(), 1u);
  const DeviceInfo& d = devices[0];
  EXPECT_FALSE(d.name.empty());
  EXPECT_FALSE(d.vendor.empty());
  EXPECT_EQ(d.version.rfind("OpenCL ", 0), 0u) << d.version;
  EXPECT_GT(d.total_memory, 0);
  EXPECT_GT(d.compute_units, 0);
  EXPECT_EQ(d.pool_bytes, 0);
  EXPECT_EQ(d.free_memory, d.total_memory);

  // After a render the pool holds its buffers, and free memory says so.
  const TestBatch batch = make_batch(4, 50);
  std::vector<uint8_t> out;
  ASSERT_TRUE(render_into(*m_backend, line_params(128, 64), batch, &out).is_ok());
  devices = m_backend->devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_GT(devices[0].pool_bytes, 0);
  EXPECT_EQ(devices[0].pool_bytes, static_cast<int64_t>(m_backend->memory_stats().held_bytes));
  EXPECT_EQ(devices[0].free_memory, devices[0].total_memory - devices[0].pool_bytes);
}

TEST_F(OpenclBackendTest, SupportsRenderCallsWhoseImagesFit) {
  RenderParams good = line_params(800, 500);
  EXPECT_TRUE(test::render_supported(*m_backend, good));
  RenderParams ohlc = good;
  ohlc.style = ChartStyle::kOhlc;
  ohlc.dtype = PixelType::kF32;
  EXPECT_TRUE(test::render_supported(*m_backend, ohlc, 4));
  // Invalid parameters never reach a backend: the op boundary refuses them first.
  const TestBatch batch = make_batch(1, 10);
  RenderParams empty = good;
  empty.width = 0;
  RenderParams no_line = good;
  no_line.line_width = 0.0f;
  for (const RenderParams& bad : {empty, no_line}) {
    EXPECT_EQ(test::render_on(*m_backend, bad, batch.view(), batch_view(nullptr, bad, 1)).code(),
              Errc::kInvalidArgument);
  }
}

TEST_F(OpenclBackendTest, ValidatesItsArguments) {
  const TestBatch batch = make_batch(2, 30);
  const RenderParams p = line_params(64, 32);
  std::vector<uint8_t> out(image_bytes(p) * 2);
  // Output shape that does not match the params.
  BatchView wrong = batch_view(out.data(), p, 2);
  wrong.width = 63;
  EXPECT_EQ(test::render_on(*m_backend, p, batch.view(), wrong).code(), Errc::kInvalidArgument);
  // OHLC from a 1-channel series.
  RenderParams ohlc = p;
  ohlc.style = ChartStyle::kOhlc;
  EXPECT_EQ(test::render_on(*m_backend, ohlc, batch.view(), batch_view(out.data(), p, 2)).code(),
            Errc::kInvalidArgument);
  // An empty batch is fine and touches nothing.
  WindowBatch none = batch.view();
  none.count = 0;
  EXPECT_TRUE(test::render_on(*m_backend, p, none, batch_view(nullptr, p, 0)).is_ok());
  EXPECT_EQ(m_backend->memory_stats().allocations, 0u);
}

TEST_F(OpenclBackendTest, MatchesTheCpuForLinesAndBars) {
  const TestBatch lines = make_batch(5, 80);
  const RenderParams p = line_params(300, 200);
  std::vector<uint8_t> out;
  ASSERT_TRUE(render_into(*m_backend, p, lines, &out).is_ok());
  EXPECT_EQ(out, render_reference(p, lines));

  const TestBatch bars = make_batch(4, 60, 5, 4);
  RenderParams q = line_params(250, 120);
  q.style = ChartStyle::kOhlc;
  ASSERT_TRUE(render_into(*m_backend, q, bars, &out).is_ok());
  EXPECT_EQ(out, render_reference(q, bars));

  // A line chart of the close lane of OHLC data.
  ASSERT_TRUE(render_into(*m_backend, p, bars, &out).is_ok());
  EXPECT_EQ(out, render_reference(p, bars));
}

TEST_F(OpenclBackendTest, Float32Output) {
  const TestBatch batch = make_batch(3, 60);
  const RenderParams p = line_params(160, 90, PixelType::kF32);
  std::vector<uint8_t> out;
  ASSERT_TRUE(render_into(*m_backend, p, batch, &out).is_ok());
  EXPECT_EQ(out, render_reference(p, batch));
  size_t background = 0;
  size_t ink = 0;
  for (size_t i = 0; i + 4 <= out.size(); i += 4) {
    float v = 0.0f;
    std::memcpy(&v, &out[i], 4);
    ASSERT_TRUE(v >= 0.0f && v <= 1.0f) << "pixel " << i / 4 << " = " << v;
    background += v == 1.0f;
    ink += v < 0.5f;
  }
  EXPECT_GT(background, out.size() / 8);  // mostly white
  EXPECT_GT(ink, 0u);                     // with a line
}

TEST_F(OpenclBackendTest, WritesStridedOutputsAndLeavesTheGapsAlone) {
  const TestBatch batch = make_batch(4, 40);
  const RenderParams p = line_params(96, 48);
  const size_t packed = image_bytes(p);
  const size_t stride = packed + 100;
  std::vector<uint8_t> out(stride * 4, 0x5A);
  ASSERT_TRUE(
      test::render_on(*m_backend, p, batch.view(), batch_view(out.data(), p, 4, static_cast<int64_t>(stride))).is_ok());
  const auto expected = render_reference(p, batch);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(std::memcmp(out.data() + i * stride, expected.data() + i * packed, packed), 0) << "image " << i;
    for (size_t j = packed; j < stride; ++j) ASSERT_EQ(out[i * stride + j], 0x5A) << "gap after image " << i;
  }
}

TEST_F(OpenclBackendTest, PoolReusesBuffersAcrossCalls) {
  const TestBatch batch = make_batch(6, 100);
  const RenderParams p = line_params(200, 120);
  std::vector<uint8_t> out;
  ASSERT_TRUE(render_into(*m_backend, p, batch, &out).is_ok());
  const PoolStats first = m_backend->memory_stats();
  EXPECT_GT(first.allocations, 0u);
  EXPECT_EQ(first.in_use_bytes, 0u);  // everything went back to the pool
  uint64_t reuses = first.reuses;
  for (int call = 0; call < 4; ++call) {
    ASSERT_TRUE(render_into(*m_backend, p, batch, &out).is_ok());
    const PoolStats now = m_backend->memory_stats();
    EXPECT_EQ(now.allocations, first.allocations) << "call " << call + 2;
    EXPECT_GE(now.reuses, reuses + first.allocations) << "call " << call + 2;
    EXPECT_EQ(now.held_bytes, first.held_bytes);
    EXPECT_EQ(now.in_use_bytes, 0u);
    reuses = now.reuses;
  }
}

TEST_F(OpenclBackendTest, MemoryLimitIsRespected) {
  constexpr uint64_t kLimit = 2u << 20;
  auto created = test::gpu_backend_for_test(BackendKind::kOpenCL, kLimit);
  ASSERT_TRUE(created.is_ok()) << created.status().to_string();
  Backend& limited = *created.value();
  const RenderParams p = line_params(800, 500);  // 400 KB per image

  const TestBatch big = make_batch(10, 100);  // 4 MB of output
  std::vector<uint8_t> out;
  const Status too_big = render_into(limited, p, big, &out);
  EXPECT_EQ(too_big.code(), Errc::kOutOfMemory) << too_big.to_string();

  const TestBatch small = make_batch(2, 100);
  ASSERT_TRUE(render_into(limited, p, small, &out).is_ok());
  EXPECT_EQ(out, render_reference(p, small));

  const PoolStats stats = limited.memory_stats();
  EXPECT_EQ(stats.budget, kLimit);
  EXPECT_LE(stats.peak_held_bytes, kLimit);
  EXPECT_GT(stats.peak_held_bytes, 0u);
  EXPECT_EQ(stats.in_use_bytes, 0u);
  const auto devices = limited.devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_LE(devices[0].free_memory, static_cast<int64_t>(kLimit));

  // A request that can never fit is not placed on this backend.
  RenderParams huge = line_params(2048, 2048);
  EXPECT_FALSE(test::render_supported(limited, huge));
}

TEST_F(OpenclBackendTest, InjectedFaultsAreReportedAndRecoveredFrom) {
  const TestBatch batch = make_batch(3, 50);
  const RenderParams p = line_params(120, 60);
  std::vector<uint8_t> out;

  ASSERT_TRUE(fault_configure("alloc:1").is_ok());
  Status status = render_into(*m_backend, p, batch, &out);
  EXPECT_EQ(status.code(), Errc::kOutOfMemory) << status.to_string();
  EXPECT_EQ(m_backend->memory_stats().in_use_bytes, 0u);

  ASSERT_TRUE(fault_configure("kernel:1").is_ok());
  status = render_into(*m_backend, p, batch, &out);
  EXPECT_EQ(status.code(), Errc::kDeviceError) << status.to_string();
  EXPECT_EQ(m_backend->memory_stats().in_use_bytes, 0u);

  ASSERT_TRUE(fault_configure("kernel:2").is_ok());  // the second launch of the call: the render kernel
  status = render_into(*m_backend, p, batch, &out);
  EXPECT_EQ(status.code(), Errc::kDeviceError) << status.to_string();

  ASSERT_TRUE(fault_configure("").is_ok());
  status = render_into(*m_backend, p, batch, &out);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  EXPECT_EQ(out, render_reference(p, batch));
}

TEST_F(OpenclBackendTest, ConcurrentRendersMatchSerial) {
  const TestBatch lines = make_batch(6, 100, 2, 1, 11);
  const TestBatch bars = make_batch(5, 70, 3, 4, 12);
  const RenderParams line_p = line_params(320, 180);
  RenderParams bar_p = line_params(280, 140);
  bar_p.style = ChartStyle::kOhlc;
  std::vector<uint8_t> line_serial;
  std::vector<uint8_t> bar_serial;
  ASSERT_TRUE(render_into(*m_backend, line_p, lines, &line_serial).is_ok());
  ASSERT_TRUE(render_into(*m_backend, bar_p, bars, &bar_serial).is_ok());

  constexpr int kRounds = 4;
  std::vector<uint8_t> line_out[kRounds];
  std::vector<uint8_t> bar_out[kRounds];
  Status line_status[kRounds];
  Status bar_status[kRounds];
  std::thread a([&] {
    for (int i = 0; i < kRounds; ++i) line_status[i] = render_into(*m_backend, line_p, lines, &line_out[i]);
  });
  std::thread b([&] {
    for (int i = 0; i < kRounds; ++i) bar_status[i] = render_into(*m_backend, bar_p, bars, &bar_out[i]);
  });
  a.join();
  b.join();
  for (int i = 0; i < kRounds; ++i) {
    ASSERT_TRUE(line_status[i].is_ok()) << line_status[i].to_string();
    ASSERT_TRUE(bar_status[i].is_ok()) << bar_status[i].to_string();
    EXPECT_EQ(line_out[i], line_serial) << "round " << i;
    EXPECT_EQ(bar_out[i], bar_serial) << "round " << i;
  }
  EXPECT_EQ(m_backend->memory_stats().in_use_bytes, 0u);
}

TEST_F(OpenclBackendTest, RendersIntoHostAcquiredMemory) {
  const TestBatch batch = make_batch(4, 60);
  const RenderParams p = line_params(200, 100);
  const size_t bytes = image_bytes(p) * 4;
  auto block = m_backend->host_acquire(bytes);
  ASSERT_TRUE(block.is_ok()) << block.status().to_string();
  ASSERT_NE(block->handle, 0u);
  ASSERT_GE(block->bytes, bytes);
  auto* data = reinterpret_cast<uint8_t*>(block->handle);
  std::memset(data, 0x11, block->bytes);
  ASSERT_TRUE(test::render_on(*m_backend, p, batch.view(), batch_view(data, p, 4)).is_ok());
  const auto expected = render_reference(p, batch);
  EXPECT_EQ(std::memcmp(data, expected.data(), bytes), 0);
  if (block->bytes > bytes) {
    EXPECT_EQ(data[bytes], 0x11);  // nothing past the batch
  }
  const PoolBlock first = block.value();
  m_backend->host_release(first);

  // Released host blocks are reused, and an output inside one (not at its start) works too.
  auto again = m_backend->host_acquire(bytes);
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(again->handle, first.handle);
  auto* inner = reinterpret_cast<uint8_t*>(again->handle) + image_bytes(p);
  const TestBatch three = make_batch(3, 60);
  ASSERT_TRUE(test::render_on(*m_backend, p, three.view(), batch_view(inner, p, 3)).is_ok());
  EXPECT_EQ(std::memcmp(inner, render_reference(p, three).data(), image_bytes(p) * 3), 0);
  m_backend->host_release(again.value());
}

TEST_F(OpenclBackendTest, ReportsTimings) {
  const TestBatch batch = make_batch(4, 100);
  const RenderParams p = line_params(400, 200);
  std::vector<uint8_t> out;
  OpTimings timings;
  timings.upload_ms = timings.kernel_ms = timings.download_ms = -1.0;
  ASSERT_TRUE(render_into(*m_backend, p, batch, &out, &timings).is_ok());
  EXPECT_GE(timings.upload_ms, 0.0);
  EXPECT_GT(timings.kernel_ms, 0.0);
  EXPECT_GE(timings.download_ms, 0.0);
  EXPECT_LT(timings.kernel_ms, 60e3);
}

#if KILN_HAS_OPENCL
// The tests above skip when no backend can be created, which a program that fails to build would also cause: where
// a device exists, the program must build.
TEST(OpenclBackendCreate, BuildsTheProgramWhereverADeviceExists) {
  BackendOptions options;
  options.opencl_allow_cpu_devices = true;
  auto device = opencl::opencl_device_select(options);
  if (!device.is_ok()) KILN_GPU_SKIP("opencl: " << device.status().message());
  auto runtime = opencl::opencl_runtime_get(device.value());
  ASSERT_TRUE(runtime.is_ok()) << runtime.status().to_string();
  EXPECT_TRUE(runtime.value()->program) << "no program";
  auto backend = opencl_backend_create(options);
  EXPECT_TRUE(backend.is_ok()) << backend.status().to_string();
}

TEST(OpenclBackendCreate, ExplainsWhyADeviceIsUnavailable) {
  if (!test::gpu_backend_for_test(BackendKind::kOpenCL).is_ok()) KILN_GPU_SKIP("no OpenCL device");
  BackendOptions options;
  options.opencl_allow_cpu_devices = true;
  options.device_id = 99;
  auto out_of_range = opencl_backend_create(options);
  ASSERT_FALSE(out_of_range.is_ok());
  EXPECT_NE(out_of_range.status().message().find("GPU_DEVICE_ID 99 out of range"), std::string::npos)
      << out_of_range.status().message();

  // Without CPU devices: either a GPU/accelerator is found, or the error names the CPU devices it ignored.
  options = BackendOptions{};
  auto gpu_only = opencl_backend_create(options);
  if (!gpu_only.is_ok()) {
    EXPECT_NE(gpu_only.status().message().find("no GPU/accelerator device"), std::string::npos)
        << gpu_only.status().message();
    EXPECT_NE(gpu_only.status().message().find("KILN_OPENCL_DEVICE_TYPE=all"), std::string::npos)
        << gpu_only.status().message();
  }
}
#endif

}  // namespace
}  // namespace kiln
