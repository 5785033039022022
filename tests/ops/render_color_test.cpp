// Colour charts (params.color): RGB pixels in the chosen colours, volume bars by each day's direction, each moving
// average its colour, anti-aliasing per channel as the gray path; the colour settings and what refuses colour.
#include <gtest/gtest.h>

#include <cstring>

#include "common/render_helpers.h"

namespace kiln {
namespace {

const ChartRgb kBackground{250, 240, 230};
const ChartRgb kUp{0, 200, 10};
const ChartRgb kDown{220, 20, 30};
const ChartRgb kVolumeUp{0, 120, 0};
const ChartRgb kVolumeDown{200, 0, 0};
const ChartRgb kAverage{10, 20, 250};

RenderParams color_params(ChartStyle style, int32_t w, int32_t h) {
  RenderParams p;
  p.style = style;
  p.width = w;
  p.height = h;
  p.color = true;
  p.colors.background = kBackground;
  p.colors.up = kUp;
  p.colors.down = kDown;
  p.colors.volume_up = kVolumeUp;
  p.colors.volume_down = kVolumeDown;
  p.colors.averages = {kAverage};
  return p;
}

ChartRgb pixel(const std::vector<uint8_t>& image, int32_t w, int32_t x, int32_t y) {
  const size_t i = (static_cast<size_t>(y) * w + x) * 3;
  return ChartRgb{image[i], image[i + 1], image[i + 2]};
}

std::string text(ChartRgb c) { return rgb_text(c); }

// Two candles over prices 0..10, then the volume, then a flat moving average at 5: 4 px a day on 8 columns; 13 price
// rows (row = round(12 - 1.2 * price)), a 2-row gap and a 5-row volume panel.
TEST(RenderColor, CandlesVolumeAndAverageInTheirColours) {
  const int32_t w = 8, h = 20;
  RenderParams p = color_params(ChartStyle::kCandlestick, w, h);
  p.volume = true;
  p.volume_height = 5;
  p.moving_averages = 1;
  const std::vector<float> window = {
      2, 8, 1, 6, 100, 5,   // bullish: open 2, close 6
      6, 10, 0, 3, 50, 5};  // bearish: open 6, close 3
  const auto img = test::render_window(window, p, 6);
  ASSERT_EQ(img.size(), static_cast<size_t>(w * h * 3));
  // The averages' row: round((1 - 5 / 10) * 12) = 6, across the day columns 1..5 (the gap column 3 included).
  for (int32_t x = 1; x <= 5; ++x) EXPECT_EQ(text(pixel(img, w, x, 6)), text(kAverage)) << "x " << x;
  // Bodies: candle 0 rows 5 (close 6) .. 10 (open 2) at x 0..2; candle 1 rows 5 (open 6) .. 8 (close 3) at x 4..6.
  EXPECT_EQ(text(pixel(img, w, 0, 9)), text(kUp));
  EXPECT_EQ(text(pixel(img, w, 1, 2)), text(kUp));  // the wick up to the high (8: row 2)
  EXPECT_EQ(text(pixel(img, w, 4, 7)), text(kDown));
  EXPECT_EQ(text(pixel(img, w, 5, 0)), text(kDown));  // the wick up to the high (10: row 0)
  EXPECT_EQ(text(pixel(img, w, 0, 0)), text(kBackground));
  EXPECT_EQ(text(pixel(img, w, 3, 9)), text(kBackground));  // the gap
  for (int32_t y = 13; y < 15; ++y) EXPECT_EQ(text(pixel(img, w, 1, y)), text(kBackground)) << "gap row " << y;
  // Volume: day 0 (the largest) fills the 5 panel rows of column 1, day 1 half of them (round(2.5) = 3) of column 5.
  for (int32_t y = 15; y < 20; ++y) EXPECT_EQ(text(pixel(img, w, 1, y)), text(kVolumeUp)) << "y " << y;
  for (int32_t y = 15; y < 20; ++y) {
    EXPECT_EQ(text(pixel(img, w, 5, y)), text(y >= 17 ? kVolumeDown : kBackground)) << "y " << y;
  }
}

// A doji (close == open) is bullish, like the gray inks (mplfinance would draw it in its down colour).
TEST(RenderColor, ACloseEqualToTheOpenIsBullish) {
  RenderParams p = color_params(ChartStyle::kOhlc, 8, 11);
  const auto img = test::render_window({5, 10, 0, 5, 5, 10, 0, 5}, p, 4);
  EXPECT_EQ(text(pixel(img, 8, 1, 3)), text(kUp));
}

// On a close-only series a volume bar is bullish when the close is at or above the day before's; the first day is.
TEST(RenderColor, CloseOnlyVolumeFollowsTheChangeFromTheDayBefore) {
  RenderParams p = color_params(ChartStyle::kLine, 4, 30);
  p.volume = true;
  p.volume_height = 10;
  const std::vector<float> window = {5, 1, 4, 1, 3, 1, 3, 1};  // closes 5, 4, 3, 3 with volume 1 each
  const auto img = test::render_window(window, p, 2);
  const ChartRgb expected[4] = {kVolumeUp, kVolumeDown, kVolumeDown, kVolumeUp};
  for (int32_t day = 0; day < 4; ++day) EXPECT_EQ(text(pixel(img, 4, day, 29)), text(expected[day])) << day;
}

// Anti-aliasing as the gray path: channel c of a colour line chart is the gray chart with background and ink set to
// the colours' component c, and edge pixels lie strictly between them.
TEST(RenderColor, EachChannelIsTheGrayChartOfItsComponent) {
  const int32_t w = 90, h = 50;
  RenderParams p = color_params(ChartStyle::kLine, w, h);
  p.colors.line = ChartRgb{30, 90, 200};
  p.line_width = 2.5f;
  std::vector<float> window;
  for (int32_t i = 0; i < 25; ++i) window.push_back(static_cast<float>((i * 7) % 11) + 0.3f * static_cast<float>(i));
  const auto img = test::render_window(window, p, 1);
  int32_t partial = 0;
  for (int32_t c = 0; c < 3; ++c) {
    RenderParams gray = p;
    gray.color = false;
    gray.background = kBackground.channel(c);
    gray.ink = p.colors.line.channel(c);
    const auto plane = test::render_window(window, gray, 1);
    for (size_t j = 0; j < plane.size(); ++j) {
      ASSERT_EQ(img[j * 3 + c], plane[j]) << "channel " << c << " pixel " << j;
      const int32_t lo = std::min(gray.background, gray.ink);
      const int32_t hi = std::max(gray.background, gray.ink);
      partial += c == 2 && plane[j] > lo && plane[j] < hi ? 1 : 0;
    }
  }
  EXPECT_GT(partial, w);  // the stroke's anti-aliased edges
}

TEST(RenderColor, Float32IsTheLevelOver255) {
  RenderParams p = color_params(ChartStyle::kOhlc, 8, 11);
  p.dtype = PixelType::kF32;
  const std::vector<float> window = {2, 8, 1, 6, 6, 10, 0, 3};
  const int64_t start = 0;
  std::vector<float> image(8 * 11 * 3);
  const BatchView out{image.data(), 1, 8, 11, 3, PixelType::kF32, static_cast<int64_t>(image.size() * 4)};
  ASSERT_TRUE(test::render_cpu_windows(p, WindowBatch{window.data(), 4, &start, 1, 2}, out).is_ok());
  const size_t wick = (3 * 8 + 1) * 3;  // x 1, row 3 (the high-low bar spans rows 2..9)
  EXPECT_FLOAT_EQ(image[wick + 1], 200.0f / 255.0f);
  EXPECT_FLOAT_EQ(image[0], 250.0f / 255.0f);
  EXPECT_FLOAT_EQ(image[2], 230.0f / 255.0f);
}

TEST(RenderColor, EncodingsAndGrayOutputsRefuseColour) {
  std::vector<float> series(20, 1.0f);
  for (size_t i = 0; i < series.size(); ++i) series[i] = static_cast<float>(i % 7);
  const int64_t start = 0;
  const WindowBatch windows{series.data(), 1, &start, 1, 10};
  RenderParams p;
  p.style = ChartStyle::kGasf;
  p.width = p.height = 10;
  p.color = true;
  const Status status = render_validate(p, windows);
  EXPECT_EQ(status.code(), Errc::kInvalidArgument);
  EXPECT_NE(status.message().find("color"), std::string::npos) << status.message();
  // A colour call whose images have one channel.
  p.style = ChartStyle::kLine;
  std::vector<uint8_t> image(100);
  const Status wrong = test::render_cpu_windows(p, windows, BatchView{image.data(), 1, 10, 10, 1, PixelType::kU8, 100});
  EXPECT_EQ(wrong.code(), Errc::kInvalidArgument);
  p.colors.averages.clear();
  EXPECT_EQ(render_validate(p, windows).code(), Errc::kInvalidArgument);
}

TEST(RenderColor, ColoursParseAsHexAndRoundTripThroughTheSettings) {
  auto c = rgb_parse("#00fF7f");
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ(text(c.value()), "#00ff7f");
  EXPECT_TRUE(rgb_parse("a02128").is_ok());
  for (const char* bad : {"", "#12345", "#1234567", "#gg0000", "red"}) {
    EXPECT_EQ(rgb_parse(bad).status().code(), Errc::kInvalidArgument) << bad;
  }
  RenderParams p;
  const auto& table = render_params();
  ASSERT_TRUE(table.set(p, "color_up", ParamValue(std::string("#112233")), "test").is_ok());
  EXPECT_EQ(text(p.colors.up), "#112233");
  ASSERT_TRUE(table.set(p, "color_averages", ParamValue(std::string("#ff0000,#00ff00")), "test").is_ok());
  ASSERT_EQ(p.colors.averages.size(), 2U);
  EXPECT_EQ(std::get<std::string>(table.get(&p, "color_averages")), "#ff0000,#00ff00");
  EXPECT_FALSE(table.set(p, "color_averages", ParamValue(std::string("#ff0000,")), "test").is_ok());
  // Defaults: mplfinance's charles candles and volume, white background.
  const RenderParams defaults;
  EXPECT_EQ(text(defaults.colors.up), "#006340");
  EXPECT_EQ(text(defaults.colors.down), "#a02128");
  EXPECT_EQ(text(defaults.colors.background), "#ffffff");
}

}  // namespace
}  // namespace kiln
