// Same input -> byte-identical images for every CPU ISA variant (scalar reference, generic, AVX2), thread count
// and batch size.
#include <gtest/gtest.h>

#include "common/reference_render.h"
#include "common/render_helpers.h"
#include "ops/cpu/render_cpu.h"

namespace kiln {
namespace {

class IsaGuard {
 public:
  IsaGuard() : m_saved(cpu_isa_active()) {}
  ~IsaGuard() { cpu_isa_set(m_saved); }

 private:
  CpuIsa m_saved;
};

struct DeterminismCase {
  ChartStyle style;
  int32_t width, height;
  float line_width;
  int32_t seq_len;
  bool layers = false;  // a volume panel and two moving averages (bars without the gap sub-column)
};

class RenderDeterminism : public ::testing::TestWithParam<DeterminismCase> {
 protected:
  void SetUp() override {
    const auto c = GetParam();
    channels = chart_style_draws_bars(c.style) ? 4 : 1;
    const auto walk = test::random_walk(400, 99, 2.0f);
    for (size_t i = 0; i < walk.size(); ++i) {
      if (channels == 1) {
        series.push_back(walk[i]);
      } else {
        const float open = i > 0 ? walk[i - 1] : walk[i];
        series.insert(series.end(), {open, std::max(open, walk[i]) + 0.5f, std::min(open, walk[i]) - 0.5f, walk[i]});
      }
      if (c.layers) {  // volume, then a 3- and a 10-row trailing mean
        series.push_back(static_cast<float>((i * 7919) % 1000));
        for (const size_t n : {size_t{3}, size_t{10}}) {
          float sum = 0.0f;
          const size_t first = i + 1 >= n ? i + 1 - n : 0;
          for (size_t u = first; u <= i; ++u) sum += walk[u];
          series.push_back(sum / static_cast<float>(i + 1 - first));
        }
      }
    }
    if (c.layers) {
      channels += 3;
      params.volume = true;
      params.moving_averages = 2;
      params.bar_gap = false;
    }
    for (int64_t s = 0; s + c.seq_len <= 400; s += 13) starts.push_back(s);
    params.style = c.style;
    params.width = c.width;
    params.height = c.height;
    params.line_width = c.line_width;
  }

  std::vector<uint8_t> render(CpuIsa isa, int64_t batch, int32_t threads) {
    cpu_isa_set(isa);
    return test::render_series(series, channels, starts, GetParam().seq_len, params, batch, threads);
  }

  IsaGuard guard;
  int32_t channels = 1;
  std::vector<float> series;
  std::vector<int64_t> starts;
  RenderParams params;
};

TEST_P(RenderDeterminism, IsaVariantsThreadsAndBatchesAgreeExactly) {
  const auto reference = render(CpuIsa::kScalar, 1, 1);
  EXPECT_EQ(render(CpuIsa::kGeneric, 7, 1), reference) << "generic SIMD vs scalar";
  EXPECT_EQ(render(cpu_isa_best(), 64, 1), reference) << cpu_isa_name(cpu_isa_best()) << " vs scalar";
  EXPECT_EQ(render(cpu_isa_best(), 5, 3), reference) << "3 threads, batches of 5";
  EXPECT_EQ(render(cpu_isa_best(), 1000, 2), reference) << "2 threads, one batch";
}

INSTANTIATE_TEST_SUITE_P(Cases, RenderDeterminism,
                         ::testing::Values(DeterminismCase{ChartStyle::kLine, 800, 500, 3.0f, 100},
                                           DeterminismCase{ChartStyle::kLine, 224, 224, 2.0f, 100},
                                           DeterminismCase{ChartStyle::kLine, 97, 31, 0.5f, 40},
                                           DeterminismCase{ChartStyle::kLine, 64, 300, 10.0f, 2},
                                           DeterminismCase{ChartStyle::kOhlc, 400, 120, 3.0f, 100},
                                           DeterminismCase{ChartStyle::kOhlc, 333, 77, 3.0f, 60},
                                           DeterminismCase{ChartStyle::kCandlestick, 333, 77, 3.0f, 60},
                                           DeterminismCase{ChartStyle::kLine, 800, 500, 3.0f, 100, true},
                                           DeterminismCase{ChartStyle::kOhlc, 60, 64, 3.0f, 20, true},
                                           DeterminismCase{ChartStyle::kCandlestick, 333, 77, 3.0f, 60, true}));

}  // namespace
}  // namespace kiln
