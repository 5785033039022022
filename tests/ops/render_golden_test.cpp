// Golden images: small line and OHLC charts checked into tests/golden/ as PNG, compared exactly.
// Regenerate (after an intended change, inspecting the new files) with KILN_UPDATE_GOLDEN=1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "common/reference_render.h"
#include "common/render_helpers.h"
#include "common/test_util.h"
#include "io/png_codec.h"

namespace kiln {
namespace {

struct GoldenCase {
  const char* name;
  ChartStyle style;
  int32_t width, height;
  float line_width;
};

std::vector<float> golden_series(ChartStyle style) {
  const auto walk = test::random_walk(24, 2024, 1.0f);
  if (style == ChartStyle::kLine) return walk;
  std::vector<float> bars;
  for (size_t i = 0; i < walk.size(); ++i) {
    const float open = i > 0 ? walk[i - 1] : walk[i] - 0.3f;
    bars.insert(bars.end(), {open, std::max(open, walk[i]) + 0.4f, std::min(open, walk[i]) - 0.4f, walk[i]});
  }
  return bars;
}

class RenderGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(RenderGolden, MatchesCheckedInPng) {
  const auto c = GetParam();
  RenderParams p;
  p.style = c.style;
  p.width = c.width;
  p.height = c.height;
  p.line_width = c.line_width;
  const auto img = test::render_window(golden_series(c.style), p, c.style == ChartStyle::kOhlc ? 4 : 1);
  const std::string path = test::source_path(std::string("tests/golden/") + c.name + ".png");

  if (const char* update = std::getenv("KILN_UPDATE_GOLDEN"); update != nullptr && update[0] == '1') {
    std::vector<uint8_t> png;
    ImageView view{const_cast<uint8_t*>(img.data()), c.width, c.height, 1, c.width, PixelType::kU8};
    ASSERT_TRUE(png_encode(view, png, 9).is_ok());
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing golden " << path;
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto decoded = png_decode(bytes.data(), bytes.size());
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  ASSERT_EQ(decoded->width, c.width);
  ASSERT_EQ(decoded->height, c.height);
  ASSERT_EQ(decoded->channels, 1);
  EXPECT_EQ(decoded->pixels, img) << "rendering changed; inspect and regenerate with KILN_UPDATE_GOLDEN=1";
}

INSTANTIATE_TEST_SUITE_P(Cases, RenderGolden,
                         ::testing::Values(GoldenCase{"line_96x48_lw2", ChartStyle::kLine, 96, 48, 2.0f},
                                           GoldenCase{"line_64x64_lw1", ChartStyle::kLine, 64, 64, 1.0f},
                                           GoldenCase{"ohlc_96x40", ChartStyle::kOhlc, 96, 40, 3.0f},
                                           GoldenCase{"ohlc_70x40_scaled", ChartStyle::kOhlc, 70, 40, 3.0f}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kiln
