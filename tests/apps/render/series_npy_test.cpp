// series_load_npy() and the .npy side of series_load(). NPY files are built byte by byte here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "apps/render/series_test_util.h"
#include "common/test_util.h"
#include "kiln/apps/render.h"

namespace kiln {
namespace {

using test::load_failed;
using test::TempDir;

template <typename T>
std::string raw_bytes(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// An NPY file: magic, version, header length, the dict padded with spaces to a 64-byte boundary, data.
std::string npy_bytes(const std::string& descr, bool fortran, const std::string& shape, const std::string& data,
                      int version = 1) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': " + shape + ", }";
  const size_t prefix = version == 1 ? 10 : 12;
  const size_t total = prefix + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  const uint32_t len = static_cast<uint32_t>(dict.size());
  out += static_cast<char>(len & 0xFF);
  out += static_cast<char>((len >> 8) & 0xFF);
  if (version != 1) {
    out += static_cast<char>((len >> 16) & 0xFF);
    out += static_cast<char>((len >> 24) & 0xFF);
  }
  return out + dict + data;
}

std::string write_file(const TempDir& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir.file(name);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

TEST(SeriesNpy, Float32Vector) {
  TempDir dir;
  const std::vector<float> values = {1.5f, -2.25f, 3.0e6f, 0.1f};
  const std::string path = write_file(dir, "close.npy", npy_bytes("<f4", false, "(4,)", raw_bytes(values)));
  Result<Series> r = series_load_npy(path, false);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->rows, 4);
  EXPECT_EQ(r->channels, 1);
  EXPECT_EQ(r->values, values);
  EXPECT_EQ(r->source, path);
  EXPECT_EQ(r->column, "close");
}

TEST(SeriesNpy, Float64OhlcCOrder) {
  TempDir dir;
  const std::vector<double> values = {1, 2, 0.5, 1.5, 1.5, 2.5, 1.25, 2.0, 2.0, 2.0, 0.125, 0.1};
  const std::string path = write_file(dir, "ohlc.npy", npy_bytes("<f8", false, "(3, 4)", raw_bytes(values)));
  ASSERT_NO_FATAL_FAILURE(test::expect_ohlc(series_load_npy(path, true), values));
  // (N, 4) without ohlc still gives 4 channels.
  Result<Series> line = series_load_npy(path, false);
  ASSERT_TRUE(line.is_ok()) << line.status().to_string();
  EXPECT_EQ(line->channels, 4);
}

TEST(SeriesNpy, FortranOrderIsTransposed) {
  TempDir dir;
  // Column-major (3, 4): all Opens, then all Highs, ...
  const std::vector<double> column_major = {1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12};
  const std::string path = write_file(dir, "f.npy", npy_bytes("<f8", true, "(3, 4)", raw_bytes(column_major)));
  Result<Series> r = series_load_npy(path, true);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const std::vector<float> expected = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  EXPECT_EQ(r->values, expected);

  const std::vector<float> vec = {7, 8, 9};
  const std::string p1 = write_file(dir, "f1.npy", npy_bytes("<f4", true, "(3,)", raw_bytes(vec)));
  Result<Series> r1 = series_load_npy(p1, false);
  ASSERT_TRUE(r1.is_ok()) << r1.status().to_string();
  EXPECT_EQ(r1->values, vec);
}

TEST(SeriesNpy, IntegersConvertToFloat) {
  TempDir dir;
  const std::vector<int64_t> i8 = {1, -2, 1LL << 40, 123456789};
  const std::string p8 = write_file(dir, "i8.npy", npy_bytes("<i8", false, "(4,)", raw_bytes(i8)));
  Result<Series> r8 = series_load_npy(p8, false);
  ASSERT_TRUE(r8.is_ok()) << r8.status().to_string();
  const std::vector<float> e8 = {1.0f, -2.0f, static_cast<float>(1LL << 40), static_cast<float>(123456789)};
  EXPECT_EQ(r8->values, e8);

  const std::vector<int32_t> i4 = {10, -20, 30};
  const std::string p4 = write_file(dir, "i4.npy", npy_bytes("<i4", false, "(3, 1)", raw_bytes(i4)));
  Result<Series> r4 = series_load_npy(p4, false);
  ASSERT_TRUE(r4.is_ok()) << r4.status().to_string();
  EXPECT_EQ(r4->channels, 1);
  EXPECT_EQ(r4->values, (std::vector<float>{10, -20, 30}));
}

TEST(SeriesNpy, Versions2And3) {
  TempDir dir;
  const std::vector<float> values = {4, 5};
  for (const int version : {2, 3}) {
    std::string name = std::to_string(version);
    name += "_version.npy";
    const std::string path = write_file(dir, name, npy_bytes("<f4", false, "(2,)", raw_bytes(values), version));
    Result<Series> r = series_load_npy(path, false);
    ASSERT_TRUE(r.is_ok()) << version << ": " << r.status().to_string();
    EXPECT_EQ(r->values, values);
  }
}

TEST(SeriesNpy, KeepsNonFiniteValues) {
  TempDir dir;
  const std::vector<double> values = {1, std::numeric_limits<double>::quiet_NaN(), -INFINITY, 2};
  const std::string path = write_file(dir, "nan.npy", npy_bytes("<f8", false, "(4,)", raw_bytes(values)));
  Result<Series> r = series_load_npy(path, false);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->values[0], 1.0f);
  EXPECT_TRUE(std::isnan(r->values[1]));
  EXPECT_EQ(r->values[2], -INFINITY);
  EXPECT_EQ(r->values[3], 2.0f);
}

TEST(SeriesNpy, OhlcNeedsFourColumns) {
  TempDir dir;
  const std::string path =
      write_file(dir, "line.npy", npy_bytes("<f4", false, "(2,)", raw_bytes(std::vector<float>{1, 2})));
  Result<Series> r = series_load_npy(path, true);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(r.status().message().find(path), std::string::npos);
  EXPECT_NE(r.status().message().find("(2,)"), std::string::npos);
}

TEST(SeriesNpy, UnsupportedShapesAndDtypes) {
  TempDir dir;
  struct Case {
    std::string descr;
    std::string shape;
    size_t bytes;
    std::string named;  // what the message must mention
  };
  const std::vector<Case> cases = {
      {"<f4", "(2, 3)", 24, "(2, 3)"},     {"<f4", "(2, 2, 4)", 64, "(2, 2, 4)"}, {"<f4", "()", 4, "()"},
      {">f8", "(2,)", 16, "'>f8'"},        {"<i2", "(2,)", 4, "'<i2'"},           {"|u1", "(2,)", 2, "'|u1'"},
      {"<c8", "(2,)", 16, "'<c8'"},
  };
  for (const Case& c : cases) {
    const std::string path = write_file(dir, "u.npy", npy_bytes(c.descr, false, c.shape, std::string(c.bytes, '\0')));
    Result<Series> r = series_load_npy(path, false);
    ASSERT_FALSE(r.is_ok()) << c.descr << " " << c.shape;
    EXPECT_EQ(r.status().code(), Errc::kUnsupportedFormat) << c.descr << " " << c.shape;
    EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(c.named), std::string::npos) << r.status().message();
  }
}

TEST(SeriesNpy, TruncatedFilesAreIoErrors) {
  TempDir dir;
  const std::string full = npy_bytes("<f8", false, "(4,)", raw_bytes(std::vector<double>{1, 2, 3, 4}));
  // Data cut short, header cut short, only the magic.
  for (const size_t keep : {full.size() - 1, full.size() - 32, size_t{40}, size_t{8}}) {
    const std::string path = write_file(dir, "cut.npy", full.substr(0, keep));
    Result<Series> r = series_load_npy(path, false);
    ASSERT_FALSE(r.is_ok()) << keep;
    EXPECT_EQ(r.status().code(), Errc::kIoError) << keep << ": " << r.status().message();
    EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status().message();
  }
}

TEST(SeriesNpy, NotAnNpyFileAndMissingFile) {
  TempDir dir;
  const std::string path = write_file(dir, "text.npy", "Close\n1\n2\n3\n");
  ASSERT_TRUE(load_failed(series_load_npy(path, false), Errc::kUnsupportedFormat, path + ": not an NPY file"));

  const std::string missing = dir.file("missing.npy");
  ASSERT_TRUE(load_failed(series_load_npy(missing, false), Errc::kIoError, missing + ": no such file"));
}

TEST(SeriesLoad, DispatchesNpy) {
  TempDir dir;
  const std::vector<float> values = {1, 2, 3, 4, 5, 6, 7, 8};
  SeriesSource source;
  source.path = write_file(dir, "Prices.NPY", npy_bytes("<f4", false, "(2, 4)", raw_bytes(values)));
  source.ohlc = true;
  Result<Series> r = series_load(source);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->values, values);
  EXPECT_EQ(r->source, source.path);
  EXPECT_EQ(r->column, "Open,High,Low,Close");

  source.path = dir.file("gone.npy");
  ASSERT_TRUE(load_failed(series_load(source), Errc::kIoError, source.path + ": no such file"));
}

}  // namespace
}  // namespace kiln
