// Panels in the render app's core: window_plan() keeps every window (and its label's future close) within one
// symbol, moving averages start again at each symbol, and series_missing_days_apply() counts and fills missing days.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "kiln/apps/render.h"

namespace kiln {
namespace {

constexpr float kMissing = std::numeric_limits<float>::quiet_NaN();

// A line panel: symbol k holds the rows of lengths[k], valued 100 * (k + 1) + row within the symbol.
Series line_panel(const std::vector<int64_t>& lengths) {
  Series s;
  s.channels = 1;
  s.symbol_rows.push_back(0);
  for (size_t k = 0; k < lengths.size(); ++k) {
    s.symbols.push_back("S" + std::to_string(k));
    for (int64_t r = 0; r < lengths[k]; ++r) s.values.push_back(static_cast<float>(100 * (k + 1) + r));
    s.symbol_rows.push_back(s.symbol_rows.back() + lengths[k]);
  }
  s.rows = s.symbol_rows.back();
  s.source = "panel.csv";
  return s;
}

TEST(PanelSeries, WindowsNeverCrossSymbols) {
  const Series panel = line_panel({5, 2, 6});  // the middle symbol is shorter than a window
  WindowSpec spec;
  spec.seq_len = 3;
  spec.stride = 2;
  const WindowPlan plan = window_plan(panel, spec).value();
  // Symbol 0: starts 0, 2; symbol 1: none; symbol 2 (rows 7..12): starts 7, 9.
  EXPECT_EQ(plan.starts, (std::vector<int64_t>{0, 2, 7, 9}));
  EXPECT_EQ(plan.candidates, 4);
}

TEST(PanelSeries, LabelsLookOnlyWithinTheSymbol) {
  Series panel = line_panel({4, 4});
  panel.values[1] = 50;  // symbol 0: 100, 50, 102, 90 (up, then down); symbol 1: 200..203
  panel.values[3] = 90;
  WindowSpec spec;
  spec.seq_len = 2;
  spec.label_horizon = 1;
  const WindowPlan plan = window_plan(panel, spec).value();
  // Symbol 0: windows 0, 1, 2; window 2 ends at row 3, its future row 4 is symbol 1's: dropped. The same for 1.
  EXPECT_EQ(plan.starts, (std::vector<int64_t>{0, 1, 4, 5}));
  EXPECT_EQ(plan.labels, (std::vector<int8_t>{1, 0, 1, 1}));  // 50 -> 102, 102 -> 90, 201 -> 202, 202 -> 203
  EXPECT_EQ(plan.dropped_no_future, 2);
}

TEST(PanelSeries, MovingAveragesStartAgainAtEachSymbol) {
  const Series panel = line_panel({3, 3});
  const Series layered = series_with_moving_averages(panel, {2}).value();
  ASSERT_EQ(layered.channels, 2);
  std::vector<float> average;
  for (int64_t r = 0; r < layered.rows; ++r) average.push_back(layered.row(r)[1]);
  EXPECT_TRUE(std::isnan(average[0]));
  EXPECT_EQ(average[1], 100.5F);
  EXPECT_EQ(average[2], 101.5F);
  EXPECT_TRUE(std::isnan(average[3]));  // symbol 1's first row: no average over symbol 0's last row
  EXPECT_EQ(average[4], 200.5F);
  EXPECT_EQ(layered.symbol_rows, panel.symbol_rows);
}

TEST(PanelSeries, MissingDaysAreCountedAndFilledFromTheSymbolsOwnLastClose) {
  // OHLC + volume, two symbols: symbol 0 row 1 has no close, symbol 1 starts with a missing day and has a NaN
  // volume on its last.
  Series s;
  s.channels = 5;
  s.layers = 1;
  s.symbols = {"A", "B"};
  s.symbol_rows = {0, 3, 6};
  s.rows = 6;
  s.values = {10, 11, 9, 10.5F, 7,  1, 2, 0, kMissing, 8,  3, 4, 2, 3.5F, 9,
              kMissing, kMissing, kMissing, kMissing, kMissing,  20, 21, 19, 20.5F, 5,  21, 22, 20, 21.5F, kMissing};
  const MissingDaysCount counted = series_missing_days_apply(s, MissingDays::kSkip, nullptr);
  EXPECT_EQ(counted.missing, 3);
  EXPECT_EQ(counted.filled, 0);
  Series filled = s;
  const MissingDaysCount count = series_missing_days_apply(filled, MissingDays::kFill, &filled);
  EXPECT_EQ(count.missing, 3);
  EXPECT_EQ(count.filled, 2);  // B's first day has no close before it: it stays missing
  const std::vector<float> flat{10.5F, 10.5F, 10.5F, 10.5F, 0};
  EXPECT_EQ(std::vector<float>(filled.row(1), filled.row(1) + 5), flat);
  EXPECT_TRUE(std::isnan(filled.row(3)[3]));
  const std::vector<float> no_volume{21, 22, 20, 21.5F, 0};
  EXPECT_EQ(std::vector<float>(filled.row(5), filled.row(5) + 5), no_volume);
}

TEST(PanelSeries, RowRangesThatDoNotTileThePanelAreRefused) {
  Series panel = line_panel({3, 3});
  panel.symbol_rows[1] = 4;
  panel.symbol_rows[2] = 5;  // ends before the last row
  EXPECT_FALSE(window_plan(panel, WindowSpec{.seq_len = 2}).is_ok());
}

// A panel bomb: 3,000 symbols of two rows each, symbol k on day k and on day 5,999. Laid out on the panel's
// calendar, symbol k would span 6,000 - k days: 13.5 million rows from 6,000 read. Refused with the reason, before
// the allocation; the same symbols over one shared stretch of days load.
TEST(PanelSeries, ACalendarThatWouldMultiplyTheRowsIsRefused) {
  const auto day = [](int32_t k) {
    const std::chrono::sys_days d = std::chrono::sys_days{std::chrono::year{2000} / 1 / 1} + std::chrono::days{k};
    const std::chrono::year_month_day ymd{d};
    char text[16];
    std::snprintf(text, sizeof(text), "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
    return std::string(text);
  };
  const auto write = [&](const std::string& name, int32_t symbols, bool overlap) {
    const std::string path = (std::filesystem::temp_directory_path() / name).string();
    std::ofstream out(path);
    out << "Symbol,Date,Close\n";
    for (int32_t k = 0; k < symbols; ++k) {
      out << "S" << k << "," << day(overlap ? 0 : k) << ",1\n";
      out << "S" << k << "," << day(overlap ? 1 : 5999) << ",2\n";
    }
    return path;
  };
  const std::string bomb = write("kiln_panel_bomb.csv", 3000, false);
  const auto refused = series_load(SeriesSource{.path = bomb, .symbol_column = "Symbol"});
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("hardly overlap"), std::string::npos) << refused.status().message();
  const std::string fine = write("kiln_panel_overlapping.csv", 3000, true);
  const auto loaded = series_load(SeriesSource{.path = fine, .symbol_column = "Symbol"});
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  EXPECT_EQ(loaded->rows, 6000);
  std::filesystem::remove(bomb);
  std::filesystem::remove(fine);
}

}  // namespace
}  // namespace kiln
