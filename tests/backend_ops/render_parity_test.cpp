// Every render case on every GPU backend against the CPU reference (scalar variant). A backend that is not
// compiled or finds no device is reported as SKIPPED with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "backend_ops/render_cases.h"
#include "backend_ops/test_backends.h"
#include "common/render_helpers.h"
#include "ops/cpu/render_cpu.h"

namespace kiln {
namespace {

class RenderParity : public ::testing::TestWithParam<BackendKind> {};

std::vector<uint8_t> render_case(Backend& backend, const test::RenderCase& c, const std::vector<float>& series,
                               Status* status) {
  const int32_t channels = (chart_style_draws_bars(c.params.style) ? 4 : 1) + render_layer_channels(c.params);
  std::vector<int64_t> starts;
  for (int32_t i = 0; i < c.windows; ++i) starts.push_back(static_cast<int64_t>(i) * c.stride);
  const WindowBatch windows{series.data(), channels, starts.data(), c.windows, c.seq_len};
  const int32_t image_channels = render_image_channels(c.params);
  const size_t image_bytes =
      static_cast<size_t>(c.params.width) * c.params.height * image_channels * pixel_type_size(c.params.dtype);
  std::vector<uint8_t> out(image_bytes * static_cast<size_t>(c.windows), 0xAB);
  const BatchView view{out.data(), c.windows, c.params.width, c.params.height, image_channels, c.params.dtype,
                       static_cast<int64_t>(image_bytes)};
  *status = test::render_on(backend, c.params, windows, view);
  return out;
}

int32_t max_abs_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, PixelType type) {
  int32_t worst = 0;
  if (type == PixelType::kU8) {
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(static_cast<int32_t>(a[i]) - b[i]));
  } else {
    for (size_t i = 0; i + 4 <= a.size(); i += 4) {
      float x = 0;
      float y = 0;
      std::memcpy(&x, &a[i], 4);
      std::memcpy(&y, &b[i], 4);
      worst = std::max(worst, static_cast<int32_t>(std::ceil(std::abs(x - y) * 255.0f)));
    }
  }
  return worst;
}

TEST_P(RenderParity, EveryCaseMatchesTheCpuReference) {
  auto backend = test::gpu_backend_for_test(GetParam());
  if (!backend.is_ok()) KILN_GPU_SKIP(backend_kind_name(GetParam()) << ": " << backend.status().message());
  const CpuIsa saved = cpu_isa_active();
  cpu_isa_set(CpuIsa::kScalar);
  auto cpu = cpu_backend_create();
  for (const auto& c : test::render_cases()) {
    SCOPED_TRACE(c.name);
    const auto series = test::render_case_series(c);
    Status cpu_status;
    Status gpu_status;
    const auto expected = render_case(*cpu, c, series, &cpu_status);
    const auto actual = render_case(*backend.value(), c, series, &gpu_status);
    ASSERT_TRUE(cpu_status.is_ok()) << cpu_status.to_string();
    ASSERT_TRUE(gpu_status.is_ok()) << gpu_status.to_string();
    EXPECT_LE(max_abs_diff(expected, actual, c.params.dtype), c.max_abs_diff);
  }
  cpu_isa_set(saved);
}

// Render reads its windows and writes its images in host memory: calls with device batches are not taken.
TEST_P(RenderParity, DeviceBatchesAreNotSupported) {
  auto backend = test::gpu_backend_for_test(GetParam());
  if (!backend.is_ok()) KILN_GPU_SKIP(backend_kind_name(GetParam()) << ": " << backend.status().message());
  RenderParams params;
  params.width = 32;
  params.height = 16;
  std::vector<float> window(8, 1.0f);
  std::vector<uint8_t> image(32 * 16);
  const int64_t start = 0;
  const RenderCall render(params, WindowBatch{window.data(), 1, &start, 1, 8},
                          BatchView{image.data(), 1, 32, 16, 1, PixelType::kU8, 32 * 16});
  EXPECT_TRUE(backend.value()->supports(render.call()));
  OpCall device_in = render.call();
  device_in.in.space = MemorySpace::kDevice;
  EXPECT_FALSE(backend.value()->supports(device_in));
  OpCall device_out = render.call();
  device_out.out.space = MemorySpace::kDevice;
  EXPECT_FALSE(backend.value()->supports(device_out));
}

INSTANTIATE_TEST_SUITE_P(Backends, RenderParity, ::testing::Values(BackendKind::kCuda, BackendKind::kOpenCL),
                         [](const auto& info) { return std::string(backend_kind_name(info.param)); });

}  // namespace
}  // namespace kiln
