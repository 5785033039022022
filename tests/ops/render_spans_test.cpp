// The span path of the CPU renderer (src/ops/cpu/render_spans.h: uint8 bar charts one pixel column per sub-column,
// at most 64 x 64, with volume and moving averages) against the scalar reference's general loops, byte for byte, on
// windows made to reach its corners: flat stretches, spikes, zero and negative volumes, non-finite values, averages
// outside the prices, steep and shallow average segments.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/render_helpers.h"
#include "ops/cpu/render_cpu.h"

namespace kiln {
namespace {

class SpanIsaRestore {
 public:
  SpanIsaRestore() : m_saved(cpu_isa_active()) {}
  ~SpanIsaRestore() { cpu_isa_set(m_saved); }

 private:
  CpuIsa m_saved;
};

struct SpanCase {
  const char* name;
  ChartStyle style;
  int32_t days, width, height;
  bool bar_gap, volume;
  int32_t averages;
  uint8_t background, bullish, bearish, ink;
  bool color = false;
};

// OHLC, then the volume and the averages, per row.
std::vector<float> span_series(int64_t rows, const SpanCase& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> series;
  float close = 50.0f;
  for (int64_t i = 0; i < rows; ++i) {
    float open = close * std::exp(0.01f * normal(rng));
    close *= std::exp(0.03f * normal(rng));
    float high = std::max(open, close) * std::exp(std::abs(0.01f * normal(rng)));
    float low = std::min(open, close) * std::exp(-std::abs(0.01f * normal(rng)));
    if (i % 53 < 25) open = high = low = close = 42.0f;  // flat windows, and flat days within windows
    if (i % 17 == 3) high = close * 3.0f;                 // spikes: steep average segments
    series.insert(series.end(), {open, high, low, close});
    if (c.volume) {
      series.push_back(i % 7 == 0 ? 0.0f : (i % 29 == 1 ? -3.0f : std::round(1e5f * (1.5f + normal(rng)))));
    }
    for (int32_t m = 0; m < c.averages; ++m) {
      series.push_back(close * (1.0f + 0.2f * static_cast<float>(m) * normal(rng)));
    }
    if (i % 211 == 100) series[series.size() - 1 - static_cast<size_t>(i % 3)] = (i % 2 != 0) ? NAN : INFINITY;
  }
  return series;
}

class RenderSpans : public ::testing::TestWithParam<SpanCase> {};

TEST_P(RenderSpans, EqualTheScalarReference) {
  const SpanCase& c = GetParam();
  RenderParams p;
  p.style = c.style;
  p.width = c.width;
  p.height = c.height;
  p.bar_gap = c.bar_gap;
  p.volume = c.volume;
  p.moving_averages = c.averages;
  p.background = c.background;
  p.ink_bullish = c.bullish;
  p.ink_bearish = c.bearish;
  p.ink = c.ink;
  p.color = c.color;
  const int32_t channels = 4 + (c.volume ? 1 : 0) + c.averages;
  const std::vector<float> series = span_series(1200, c, 55);
  std::vector<int64_t> starts;
  for (int64_t s = 0; s + c.days <= 1200; s += 3) starts.push_back(s);
  SpanIsaRestore restore;
  cpu_isa_set(CpuIsa::kScalar);
  const auto reference = test::render_series(series, channels, starts, c.days, p, 97, 1);
  int64_t inked = 0;
  for (const uint8_t v : reference) inked += v != c.background ? 1 : 0;
  ASSERT_GT(inked, 0);
  cpu_isa_set(CpuIsa::kGeneric);
  EXPECT_EQ(test::render_series(series, channels, starts, c.days, p, 97, 1), reference) << "generic vs scalar";
  cpu_isa_set(cpu_isa_best());
  EXPECT_EQ(test::render_series(series, channels, starts, c.days, p, 64, 2), reference)
      << cpu_isa_name(cpu_isa_best()) << " vs scalar";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RenderSpans,
    ::testing::Values(SpanCase{"jkx20", ChartStyle::kOhlc, 20, 60, 64, false, true, 1, 0, 255, 255, 255},
                      SpanCase{"jkx5", ChartStyle::kOhlc, 5, 15, 32, false, true, 1, 0, 255, 255, 255},
                      SpanCase{"inks", ChartStyle::kOhlc, 20, 60, 64, false, true, 2, 255, 51, 0, 90},
                      SpanCase{"candles", ChartStyle::kCandlestick, 21, 63, 50, false, true, 3, 200, 30, 90, 10},
                      SpanCase{"gap", ChartStyle::kOhlc, 16, 64, 64, true, true, 4, 0, 255, 128, 77},
                      SpanCase{"no_volume", ChartStyle::kOhlc, 20, 60, 40, false, false, 1, 0, 255, 255, 255},
                      SpanCase{"no_average", ChartStyle::kOhlc, 2, 6, 16, false, true, 0, 10, 250, 100, 5},
                      SpanCase{"color", ChartStyle::kCandlestick, 20, 60, 64, false, true, 2, 0, 0, 0, 0, true}),
    [](const ::testing::TestParamInfo<SpanCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kiln
