// The series encodings (render styles gasf, gadf, mtf, rp) on every GPU backend against the CPU reference: the MTF
// and the recurrence plots exactly, the angular fields within one grey level (u8) or 1/255 (float32). A backend that
// is not compiled or finds no device is reported as SKIPPED with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "backend_ops/test_backends.h"
#include "common/render_helpers.h"

namespace kiln {
namespace {

class SeriesEncodingParity : public ::testing::TestWithParam<BackendKind> {};

std::vector<uint8_t> encode_on(Backend& backend, const RenderParams& params, const std::vector<float>& series,
                               int32_t channels, int32_t windows, int32_t seq_len) {
  std::vector<int64_t> starts;
  for (int32_t i = 0; i < windows; ++i) starts.push_back(static_cast<int64_t>(i) * 3);
  const size_t image_bytes = static_cast<size_t>(params.width) * params.height * pixel_type_size(params.dtype);
  std::vector<uint8_t> out(image_bytes * static_cast<size_t>(windows), 0xAB);
  const BatchView view{out.data(), windows, params.width, params.height, 1, params.dtype,
                       static_cast<int64_t>(image_bytes)};
  const Status status =
      test::render_on(backend, params, WindowBatch{series.data(), channels, starts.data(), windows, seq_len}, view);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return out;
}

double max_level_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, PixelType type) {
  double worst = 0;
  if (type == PixelType::kU8) {
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
    return worst;
  }
  for (size_t i = 0; i + 4 <= a.size(); i += 4) {
    float x = 0;
    float y = 0;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &b[i], 4);
    worst = std::max(worst, std::abs(double(x) - double(y)) * 255.0);
  }
  return worst;
}

TEST_P(SeriesEncodingParity, EveryEncodingMatchesTheCpu) {
  auto backend = test::gpu_backend_for_test(GetParam());
  if (!backend.is_ok()) KILN_GPU_SKIP(backend_kind_name(GetParam()) << ": " << backend.status().message());
  auto cpu = cpu_backend_create();
  std::mt19937 rng(11);
  std::normal_distribution<float> step(0.0f, 1.0f);
  constexpr int32_t kWindows = 9;
  constexpr int32_t kSeqLen = 40;
  for (const int32_t channels : {1, 4}) {
    std::vector<float> series;
    float close = 50.0f;
    for (int32_t t = 0; t < kSeqLen + 3 * kWindows; ++t) {
      for (int32_t c = 0; c + 1 < channels; ++c) series.push_back(close + step(rng));
      close += step(rng);
      series.push_back(close);
    }
    for (const ChartStyle style : {ChartStyle::kGasf, ChartStyle::kGadf, ChartStyle::kMtf, ChartStyle::kRp}) {
      for (const PixelType dtype : {PixelType::kU8, PixelType::kF32}) {
        for (const auto& [width, height] : {std::pair{kSeqLen, kSeqLen}, std::pair{64, 25}}) {
          RenderParams p;
          p.style = style;
          p.width = width;
          p.height = height;
          p.dtype = dtype;
          p.mtf_bins = width == kSeqLen ? 8 : 6;
          p.rp_threshold = width == kSeqLen ? -1.0f : 1.5f;
          SCOPED_TRACE(std::string(chart_style_name(style)) + " channels " + std::to_string(channels) + " " +
                       pixel_type_name(dtype) + " " + std::to_string(width) + "x" + std::to_string(height));
          const auto expected = encode_on(*cpu, p, series, channels, kWindows, kSeqLen);
          const auto actual = encode_on(*backend.value(), p, series, channels, kWindows, kSeqLen);
          const bool angular = style == ChartStyle::kGasf || style == ChartStyle::kGadf;
          EXPECT_LE(max_level_diff(expected, actual, dtype), angular ? 1.0 : 1e-4);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SeriesEncodingParity, ::testing::Values(BackendKind::kCuda, BackendKind::kOpenCL),
                         [](const auto& info) { return std::string(backend_kind_name(info.param)); });

}  // namespace
}  // namespace kiln
