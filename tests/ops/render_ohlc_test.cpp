// OHLC bars and candlesticks: exact pixel layout, ink levels and horizontal scaling.
#include <gtest/gtest.h>

#include "common/render_helpers.h"

namespace kiln {
namespace {

RenderParams ohlc_params(int32_t w, int32_t h) {
  RenderParams p;
  p.style = ChartStyle::kOhlc;
  p.width = w;
  p.height = h;
  p.ink_bullish = 50;
  p.ink_bearish = 0;
  return p;
}

// Two bars over prices 0..10 on 11 rows: row = 10 - price.
const std::vector<float> kBars = {
    2, 8, 1, 6,   // bullish: open 2, high 8, low 1, close 6
    6, 10, 0, 3,  // bearish: open 6, high 10, low 0, close 3
};

TEST(RenderOhlc, FourPixelsPerBarAtNativeWidth) {
  const int32_t w = 8, h = 11;
  const auto img = test::render_window(kBars, ohlc_params(w, h), 4);
  auto at = [&](int32_t x, int32_t y) { return img[static_cast<size_t>(y) * w + x]; };
  // Bar 0 (bullish, level 50): open tick x=0 at row 8, high-low x=1 rows 2..9, close tick x=2 at row 4, gap x=3.
  for (int32_t y = 0; y < h; ++y) {
    EXPECT_EQ(at(0, y), y == 8 ? 50 : 255) << "y " << y;
    EXPECT_EQ(at(1, y), (y >= 2 && y <= 9) ? 50 : 255) << "y " << y;
    EXPECT_EQ(at(2, y), y == 4 ? 50 : 255) << "y " << y;
    EXPECT_EQ(at(3, y), 255);
  }
  // Bar 1 (bearish, level 0): open row 4, high-low rows 0..10, close row 7.
  for (int32_t y = 0; y < h; ++y) {
    EXPECT_EQ(at(4, y), y == 4 ? 0 : 255);
    EXPECT_EQ(at(5, y), 0);
    EXPECT_EQ(at(6, y), y == 7 ? 0 : 255);
    EXPECT_EQ(at(7, y), 255);
  }
}

// Candlesticks on the same bars: the body (open to close) three pixels wide, the wick (high to low) through its middle.
TEST(RenderOhlc, CandlesticksHaveABodyFromOpenToCloseAndAWickFromHighToLow) {
  const int32_t w = 8, h = 11;
  RenderParams p = ohlc_params(w, h);
  p.style = ChartStyle::kCandlestick;
  const auto img = test::render_window(kBars, p, 4);
  auto at = [&](int32_t x, int32_t y) { return img[static_cast<size_t>(y) * w + x]; };
  // Bar 0 (bullish, level 50): body rows 4 (close 6) .. 8 (open 2) at x = 0..2, wick rows 2..9 at x = 1.
  for (int32_t y = 0; y < h; ++y) {
    const bool body = y >= 4 && y <= 8;
    EXPECT_EQ(at(0, y), body ? 50 : 255) << "y " << y;
    EXPECT_EQ(at(1, y), (y >= 2 && y <= 9) ? 50 : 255) << "y " << y;
    EXPECT_EQ(at(2, y), body ? 50 : 255) << "y " << y;
    EXPECT_EQ(at(3, y), 255);
  }
  // Bar 1 (bearish, level 0): body rows 4 (open 6) .. 7 (close 3), wick rows 0..10.
  for (int32_t y = 0; y < h; ++y) {
    const bool body = y >= 4 && y <= 7;
    EXPECT_EQ(at(4, y), body ? 0 : 255) << "y " << y;
    EXPECT_EQ(at(5, y), 0);
    EXPECT_EQ(at(6, y), body ? 0 : 255) << "y " << y;
    EXPECT_EQ(at(7, y), 255);
  }
}

TEST(RenderOhlc, DefaultWidthMatchesPredecessorColors) {
  RenderParams p;  // defaults: bullish 51 (0.2 of white), bearish 0
  EXPECT_EQ(p.ink_bullish, 51);
  EXPECT_EQ(p.ink_bearish, 0);
}

TEST(RenderOhlc, DoubleWidthScalesBarsToTwoPixelSubColumns) {
  const int32_t w = 16, h = 11;
  const auto img = test::render_window(kBars, ohlc_params(w, h), 4);
  auto at = [&](int32_t x, int32_t y) { return img[static_cast<size_t>(y) * w + x]; };
  EXPECT_EQ(at(0, 8), 50);
  EXPECT_EQ(at(1, 8), 50);
  EXPECT_EQ(at(2, 2), 50);
  EXPECT_EQ(at(3, 9), 50);
  EXPECT_EQ(at(6, 7), 255);
  EXPECT_EQ(at(11, 0), 0);
  EXPECT_EQ(at(14, 5), 255);
}

// Narrower than 4 px per bar: sub-columns share pixels; ink is the exact horizontal area coverage.
TEST(RenderOhlc, FractionalWidthConservesInk) {
  const int32_t w = 6, h = 11;
  const auto img = test::render_window(kBars, ohlc_params(w, h), 4);
  double ink = 0;
  for (uint8_t v : img) ink += 255.0 - v;
  // Native ink: bar 0 = (1 + 8 + 1) px * 205 levels, bar 1 = (1 + 11 + 1) px * 255; scaled by 6/8.
  const double expected = (10 * 205.0 + 13 * 255.0) * 6.0 / 8.0;
  EXPECT_NEAR(ink, expected, 0.5 * w * h);
}

TEST(RenderOhlc, FlatWindowSitsOnTheMiddleRow) {
  const std::vector<float> flat(4 * 3, 5.0f);
  const int32_t w = 12, h = 9;
  const auto img = test::render_window(flat, ohlc_params(w, h), 4);
  for (int32_t y = 0; y < h; ++y) {
    EXPECT_EQ(img[static_cast<size_t>(y) * w + 1], y == 4 ? 50 : 255);  // close == open counts as bullish
  }
}

TEST(RenderOhlc, NeedsFourChannels) {
  const std::vector<float> close(10, 1.0f);
  const int64_t start = 0;
  const WindowBatch windows{close.data(), 1, &start, 1, 10};
  EXPECT_EQ(render_validate(ohlc_params(40, 10), windows).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
