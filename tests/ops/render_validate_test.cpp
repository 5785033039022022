// Bad arguments are rejected at the op boundary with InvalidArgument, before anything is drawn.
#include <gtest/gtest.h>

#include <cmath>

#include "common/render_helpers.h"

namespace kiln {
namespace {

class RenderValidate : public ::testing::Test {
 protected:
  std::vector<float> series = std::vector<float>(50, 1.0f);
  int64_t start = 0;
  WindowBatch windows{series.data(), 1, &start, 1, 10};
  RenderParams params;
};

TEST_F(RenderValidate, AcceptsDefaults) { EXPECT_TRUE(render_validate(params, windows).is_ok()); }

TEST_F(RenderValidate, RejectsBadSizes) {
  for (auto [w, h] : std::vector<std::pair<int32_t, int32_t>>{{0, 10}, {10, 0}, {-5, 10}, {40000, 10}}) {
    params.width = w;
    params.height = h;
    EXPECT_EQ(render_validate(params, windows).code(), Errc::kInvalidArgument) << w << "x" << h;
  }
}

TEST_F(RenderValidate, RejectsBadLineWidths) {
  for (float lw : {0.0f, -1.0f, std::nanf(""), INFINITY, 1000.0f}) {
    params.line_width = lw;
    EXPECT_EQ(render_validate(params, windows).code(), Errc::kInvalidArgument) << lw;
  }
}

TEST_F(RenderValidate, RejectsShortWindowsAndBadChannels) {
  windows.seq_len = 1;
  EXPECT_EQ(render_validate(params, windows).code(), Errc::kInvalidArgument);
  windows.seq_len = 10;
  windows.channels = 3;
  EXPECT_EQ(render_validate(params, windows).code(), Errc::kInvalidArgument);
  windows.channels = 1;  // bars and candles are drawn from Open/High/Low/Close rows only
  for (ChartStyle style : {ChartStyle::kOhlc, ChartStyle::kCandlestick}) {
    params.style = style;
    EXPECT_EQ(render_validate(params, windows).code(), Errc::kInvalidArgument) << chart_style_name(style);
  }
}

TEST_F(RenderValidate, LayerChannelsFollowTheVolumeAndMovingAverages) {
  windows.channels = 3;  // close, volume, one moving average
  EXPECT_EQ(render_validate(params, windows).code(), Errc::kInvalidArgument);
  params.volume = true;
  params.moving_averages = 1;
  EXPECT_TRUE(render_validate(params, windows).is_ok());
  params.moving_averages = 2;  // 3 - 3 = 0 price channels
  EXPECT_EQ(render_validate(params, windows).code(), Errc::kInvalidArgument);
  params.moving_averages = 17;
  windows.channels = 19;
  EXPECT_EQ(render_validate(params, windows).code(), Errc::kInvalidArgument) << "at most 16 moving averages";
  params.moving_averages = 1;
  windows.channels = 3;
  params.height = 10;
  params.volume_height = 7;  // 10 - 7 - 2 = 1 price row
  EXPECT_EQ(render_validate(params, windows).code(), Errc::kInvalidArgument);
  params.volume_gap = 1;
  EXPECT_TRUE(render_validate(params, windows).is_ok());
  params.volume_gap = -1;
  EXPECT_EQ(render_validate(params, windows).code(), Errc::kInvalidArgument);
}

TEST_F(RenderValidate, RejectsMismatchedOutput) {
  std::vector<uint8_t> image(800 * 500);
  BatchView out{image.data(), 1, 800, 500, 1, PixelType::kU8, 800 * 500};
  EXPECT_TRUE(test::render_cpu_windows(params, windows, out).is_ok());
  out.width = 799;
  EXPECT_EQ(test::render_cpu_windows(params, windows, out).code(), Errc::kInvalidArgument);
  out.width = 800;
  out.type = PixelType::kF32;
  EXPECT_EQ(test::render_cpu_windows(params, windows, out).code(), Errc::kInvalidArgument);
  out.type = PixelType::kU8;
  out.count = 2;
  EXPECT_EQ(test::render_cpu_windows(params, windows, out).code(), Errc::kInvalidArgument);
}

TEST(RenderNames, StylesParse) {
  EXPECT_EQ(chart_style_parse("OHLC").value(), ChartStyle::kOhlc);
  EXPECT_EQ(chart_style_parse("line").value(), ChartStyle::kLine);
  EXPECT_EQ(chart_style_parse("candlestick").value(), ChartStyle::kCandlestick);
  EXPECT_EQ(chart_style_parse("candles").value(), ChartStyle::kCandlestick);
  EXPECT_EQ(chart_style_parse("candle").status().code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
