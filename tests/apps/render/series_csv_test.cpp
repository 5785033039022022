// series_load_csv() and the CSV/.txt side of series_load().
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "apps/render/series_test_util.h"
#include "common/test_util.h"
#include "kiln/apps/render.h"

namespace kiln {
namespace {

using test::load_failed;
using test::TempDir;
using test::write_text_file;

std::string write_csv(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  write_text_file(path, text);
  return path;
}

std::vector<float> floats(std::initializer_list<double> values) {
  std::vector<float> out;
  for (const double v : values) out.push_back(static_cast<float>(v));
  return out;
}

TEST(SeriesCsv, ReadsNamedColumnExactly) {
  TempDir dir;
  const std::string path = write_csv(dir, "prices.csv",
                                     "Date,Open,High,Low,Close,Volume\n"
                                     "2024-01-02,10.5,11,10,10.75,1000\n"
                                     "2024-01-03,10.75,12.25,10.5,12.125,2000\n"
                                     "2024-01-04,12.125,12.5,11,11.0625,1500\n");
  Result<Series> r = series_load_csv(path, "Close", false);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->rows, 3);
  EXPECT_EQ(r->channels, 1);
  EXPECT_EQ(r->values, floats({10.75, 12.125, 11.0625}));
  EXPECT_EQ(r->column, "Close");
  EXPECT_EQ(r->source, path);

  Result<Series> volume = series_load_csv(path, "VOLUME", false);
  ASSERT_TRUE(volume.is_ok()) << volume.status().to_string();
  EXPECT_EQ(volume->values, floats({1000, 2000, 1500}));
  EXPECT_EQ(volume->column, "Volume");  // the header's spelling
}

TEST(SeriesCsv, ColumnMatchIsCaseInsensitiveAndDefaultsToClose) {
  TempDir dir;
  const std::string path = write_csv(dir, "lower.csv", "date,close\nd1,1.25\nd2,-3e2\n");
  Result<Series> r = series_load_csv(path, "", false);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->values, floats({1.25, -300}));
  EXPECT_EQ(r->column, "close");
}

TEST(SeriesCsv, ReadsOhlcInterleaved) {
  TempDir dir;
  const std::string path = write_csv(dir, "ohlc.csv",
                                     "close,LOW,Date,high,Open\n"
                                     "4,3,x,2,1\n"
                                     "8,7,y,6,5\n");
  Result<Series> r = series_load_csv(path, "ignored", true);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->rows, 2);
  EXPECT_EQ(r->channels, 4);
  // Open, High, Low, Close.
  EXPECT_EQ(r->values, floats({1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(r->column, "Open,High,Low,Close");
  EXPECT_EQ(r->line_channel(), kClose);
}

TEST(SeriesCsv, HandlesQuotesCrlfBomAndSpaces) {
  TempDir dir;
  const std::string path = write_csv(dir, "messy.csv",
                                     "\xEF\xBB\xBF Date , \"Note\",  \"Close\" \r\n"
                                     "\"2024,01,02\", \"he said \"\"hi\"\"\",  1.5 \r\n"
                                     "2024-01-03,\"two\nlines\", \" 2.25 \"\r\n"
                                     "\r\n"
                                     "2024-01-04,plain,\t3\t\r\n");
  Result<Series> r = series_load_csv(path, "close", false);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->values, floats({1.5, 2.25, 3}));
  EXPECT_EQ(r->column, "Close");
}

TEST(SeriesCsv, NoTrailingNewlineAndExtraFieldsAreFine) {
  TempDir dir;
  const std::string path = write_csv(dir, "short.csv", "a,Close\n1,2,extra,\"x,y\"\n3,4");
  Result<Series> r = series_load_csv(path, "Close", false);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->values, floats({2, 4}));
}

TEST(SeriesCsv, TabSeparatedText) {
  TempDir dir;
  const std::string path = write_csv(dir, "prices.txt", "Date\tClose\n1\t5.5\n2\t\n3\t6.5\n");
  Result<Series> r = series_load_csv(path, "Close", false);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->rows, 3);
  EXPECT_EQ(r->values[0], 5.5f);
  EXPECT_TRUE(std::isnan(r->values[1]));
  EXPECT_EQ(r->values[2], 6.5f);
}

TEST(SeriesCsv, EmptyNanAndInfBecomeNonFinite) {
  TempDir dir;
  const std::string path = write_csv(dir, "gaps.csv",
                                     "Close\n1\n\"\"\nnan\nNaN\n-NAN\ninf\n-inf\nINF\n+Infinity\n 2 \n");
  // A one-column file: the quoted empty cell is a value, blank lines would be skipped.
  Result<Series> r = series_load_csv(path, "Close", false);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->rows, 10);
  EXPECT_EQ(r->values[0], 1.0f);
  for (int i = 1; i <= 4; ++i) EXPECT_TRUE(std::isnan(r->values[i])) << i;
  EXPECT_EQ(r->values[5], INFINITY);
  EXPECT_EQ(r->values[6], -INFINITY);
  EXPECT_EQ(r->values[7], INFINITY);
  EXPECT_EQ(r->values[8], INFINITY);
  EXPECT_EQ(r->values[9], 2.0f);

  const std::string wide = write_csv(dir, "wide.csv", "Date,Close,Volume\nd1,,5\nd2, ,6\n");
  Result<Series> w = series_load_csv(wide, "Close", false);
  ASSERT_TRUE(w.is_ok()) << w.status().to_string();
  ASSERT_EQ(w->rows, 2);
  EXPECT_TRUE(std::isnan(w->values[0]));
  EXPECT_TRUE(std::isnan(w->values[1]));
}

TEST(SeriesCsv, OverflowBecomesInfinityUnderflowZero) {
  TempDir dir;
  const std::string path = write_csv(dir, "range.csv", "Close\n1e400\n-1e400\n1e-400\n1e39\n");
  Result<Series> r = series_load_csv(path, "Close", false);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->values[0], INFINITY);
  EXPECT_EQ(r->values[1], -INFINITY);
  EXPECT_EQ(r->values[2], 0.0f);
  EXPECT_EQ(r->values[3], INFINITY);  // finite double, too large for float
}

TEST(SeriesCsv, ManyRowsReadBackExactly) {
  TempDir dir;
  std::string text = "Idx,Close\n";
  constexpr int kRows = 100000;
  for (int i = 0; i < kRows; ++i) text += std::to_string(i) + "," + std::to_string(i) + ".5\n";
  const std::string path = write_csv(dir, "many.csv", text);
  Result<Series> r = series_load_csv(path, "Close", false);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->rows, kRows);
  for (int i = 0; i < kRows; ++i) ASSERT_EQ(r->values[i], static_cast<float>(i + 0.5)) << i;
}

// --- errors -------------------------------------------------------------------------------------------

// A file that fails to load as an IoError naming the file and the row: its name and text, the column asked for and
// the message after "<path>".
struct RowError {
  std::string test;
  std::string file;
  std::string text;
  std::string column;
  std::string message;
};

void PrintTo(const RowError& e, std::ostream* os) { *os << e.test; }

class SeriesCsvRowError : public ::testing::TestWithParam<RowError> {};

TEST_P(SeriesCsvRowError, NamesFileAndRow) {
  TempDir dir;
  const RowError& e = GetParam();
  const std::string path = write_csv(dir, e.file, e.text);
  ASSERT_TRUE(load_failed(series_load_csv(path, e.column, false), Errc::kIoError, path + e.message));
}

INSTANTIATE_TEST_SUITE_P(
    SeriesCsv, SeriesCsvRowError,
    ::testing::Values(
        RowError{"NotANumberNamesFileRowAndColumn", "prices.csv", "Date,Close\nd1,1\nd2,abc\n", "close",
                 ":3: column 'Close': not a number: 'abc'"},
        // Blank line and a quoted newline before the bad row: it sits on line 6 of the file.
        RowError{"NotANumberRowCountsPhysicalLines", "lines.csv", "Note,Close\nx,1\n\n\"a\nb\",2\ny,1.2.3\n", "Close",
                 ":6: column 'Close': not a number: '1.2.3'"},
        RowError{"TooFewFieldsNamesTheRow", "ragged.csv", "Date,Open,Close\nd1,1,2\nd2,3,4\nd3,5\n", "Close",
                 ":4: only 2 fields, column 'Close' is field 3"},
        RowError{"UnterminatedQuoteNamesTheRow", "quote.csv", "Date,Close\nd1,1\n\"d2,2\nd3,3\n", "Close",
                 ":3: unterminated quoted field"},
        // A record over 1 MiB is no price row: a 2 MiB line, and a quoted field spanning 2 MiB of "" escapes (which
        // would otherwise be copied whole).
        RowError{"OverlongLineIsRefused", "long.csv", "Date,Close\nd1,1\nd2," + std::string(2 << 20, '7') + "\n",
                 "Close", ":3: a record longer than 1 MiB (not a price series CSV)"},
        RowError{"OverlongQuotedFieldIsRefused", "longq.csv",
                 "Date,Close\n\"" + std::string(1 << 20, '"') + std::string(1 << 20, 'x') + "\",1\n", "Close",
                 ":2: a record longer than 1 MiB (not a price series CSV)"}),
    [](const ::testing::TestParamInfo<RowError>& info) { return info.param.test; });

TEST(SeriesCsv, RejectsPartialNumbersAndWords) {
  TempDir dir;
  for (const std::string bad : {"12abc", "1,5", "--1", "+-1", "infinite", "nanx", "$5", "0x10", "-"}) {
    const std::string path = write_csv(dir, "bad.csv", "Close;Other\n\"" + bad + "\";1\n");
    ASSERT_TRUE(load_failed(series_load_csv(path, "Close", false), Errc::kIoError,
                            path + ":2: column 'Close': not a number: '" + bad + "'"))
        << bad;
  }
}

TEST(SeriesCsv, OhlcErrorNamesTheColumn) {
  TempDir dir;
  const std::string path = write_csv(dir, "ohlc.csv", "Open,High,Low,Close\n1,2,0.5,1.5\n1,x,0.5,1.5\n");
  Result<Series> r = series_load_csv(path, "Close", true);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), path + ":3: column 'High': not a number: 'x'");
}

TEST(SeriesCsv, MissingColumnListsColumns) {
  TempDir dir;
  const std::string path = write_csv(dir, "prices.csv", "Date,Open,High,Low,Last\nd,1,2,3,4\n");
  ASSERT_TRUE(load_failed(series_load_csv(path, "Close", false), Errc::kInvalidArgument,
                          path + ":1: no column 'Close' (columns: Date, Open, High, Low, Last)"));

  const std::string no_low = write_csv(dir, "nolow.csv", "Open,High,Close\n1,2,3\n");
  ASSERT_TRUE(load_failed(series_load_csv(no_low, "Close", true), Errc::kInvalidArgument,
                          no_low + ":1: no column 'Low' (columns: Open, High, Close)"));
}

TEST(SeriesCsv, EmptyAndHeaderOnlyFiles) {
  TempDir dir;
  for (const std::string text : {"", "\xEF\xBB\xBF", "\n\r\n  \n"}) {
    const std::string path = write_csv(dir, "empty.csv", text);
    ASSERT_TRUE(load_failed(series_load_csv(path, "Close", false), Errc::kIoError, path + ": empty file"));
  }
  for (const std::string text : {"Date,Close", "Date,Close\r\n", "Date,Close\n\n\n"}) {
    const std::string path = write_csv(dir, "header.csv", text);
    ASSERT_TRUE(
        load_failed(series_load_csv(path, "Close", false), Errc::kIoError, path + ": header only, no data rows"));
  }
}

TEST(SeriesCsv, MissingFile) {
  TempDir dir;
  const std::string path = dir.file("nope.csv");
  ASSERT_TRUE(load_failed(series_load_csv(path, "Close", false), Errc::kIoError, path + ": no such file"));

  Result<Series> d = series_load_csv(dir.path().string(), "Close", false);
  ASSERT_FALSE(d.is_ok());
  EXPECT_EQ(d.status().code(), Errc::kIoError);
}

// --- series_load dispatch ----------------------------------------------------------------------------

TEST(SeriesLoad, DispatchesCsvAndTxt) {
  TempDir dir;
  const std::string csv = write_csv(dir, "PRICES.CSV", "Date,Close,Price\nd,1.5,7\n");
  SeriesSource source;
  source.path = csv;
  Result<Series> r = series_load(source);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->values, floats({1.5}));
  EXPECT_EQ(r->source, csv);
  EXPECT_EQ(r->column, "Close");

  source.path = write_csv(dir, "p.txt", "Date,Close,Price\nd,1.5,7\n");
  source.column = "price";
  r = series_load(source);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->values, floats({7}));
  EXPECT_EQ(r->column, "Price");

  source.path = write_csv(dir, "o.csv", "Open,High,Low,Close\n1,2,3,4\n");
  source.ohlc = true;
  r = series_load(source);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->channels, 4);
  EXPECT_EQ(r->column, "Open,High,Low,Close");
}

TEST(SeriesLoad, MissingFileAndUnknownExtension) {
  TempDir dir;
  SeriesSource source;
  source.path = dir.file("x.csv");
  ASSERT_TRUE(load_failed(series_load(source), Errc::kIoError, source.path + ": no such file"));

  source.path = write_csv(dir, "x.parquet", "Close\n1\n");
  Result<Series> r = series_load(source);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kUnsupportedFormat);
  EXPECT_NE(r.status().message().find(source.path), std::string::npos);

  source.path = "";
  r = series_load(source);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
