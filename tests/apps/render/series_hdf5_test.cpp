// series_load_hdf5() and the .h5 side of series_load(). Test files are written with the HDF5 C API.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <cstdint>
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

void write_dataset(hid_t parent, const char* name, hid_t file_type, hid_t mem_type, const std::vector<hsize_t>& dims,
                   const void* data) {
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  ASSERT_GE(space, 0);
  const hid_t ds = H5Dcreate2(parent, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(ds, 0) << name;
  if (data != nullptr) {
    EXPECT_GE(H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0) << name;
  }
  H5Dclose(ds);
  H5Sclose(space);
}

const std::vector<float> kClose = {100.5f, 101.25f, std::numeric_limits<float>::quiet_NaN(), 99.0f, 98.75f};
const std::vector<double> kOhlc = {1, 2, 0.5, 1.5, 1.5, 2.5, 1.25, 2.0, 2.0, 2.0, 0.125, 0.1};
const std::vector<int32_t> kInts = {3, -4, 5};

// /close (5,) float32, /prices/ohlc (3,4) float64 chunked + deflate, /ints (3,1) int32, /wide (2,3),
// /cube (2,2,2), /names (2,) strings, /scalar, /empty (0,), group /prices.
std::string make_file(const TempDir& dir) {
  const std::string path = dir.file("data.h5");
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(file, 0);
  write_dataset(file, "close", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {5}, kClose.data());

  const hid_t group = H5Gcreate2(file, "prices", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  {
    const hsize_t dims[2] = {3, 4};
    const hsize_t chunk[2] = {2, 4};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    H5Pset_deflate(dcpl, 4);
    const hid_t ds = H5Dcreate2(group, "ohlc", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    EXPECT_GE(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, kOhlc.data()), 0);
    H5Dclose(ds);
    H5Pclose(dcpl);
    H5Sclose(space);
  }
  H5Gclose(group);

  write_dataset(file, "ints", H5T_STD_I32BE, H5T_NATIVE_INT32, {3, 1}, kInts.data());
  const std::vector<float> six(6, 1.0f);
  write_dataset(file, "wide", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {2, 3}, six.data());
  const std::vector<float> eight(8, 1.0f);
  write_dataset(file, "cube", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {2, 2, 2}, eight.data());
  write_dataset(file, "empty", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {0}, nullptr);
  {
    const hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, 4);
    const char names[8] = {'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'};
    write_dataset(file, "names", str, str, {2}, names);
    H5Tclose(str);
  }
  {
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t ds = H5Dcreate2(file, "scalar", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const float one = 1.0f;
    H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &one);
    H5Dclose(ds);
    H5Sclose(space);
  }
  H5Fclose(file);
  return path;
}

// The datasets of make_file(), for the SeriesHdf5 tests.
class SeriesHdf5 : public ::testing::Test {
 protected:
  TempDir dir;
  const std::string path = make_file(dir);
};

TEST_F(SeriesHdf5, ReadsVectorExactly) {
  Result<Series> r = series_load_hdf5(path, "/close", false);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->rows, 5);
  EXPECT_EQ(r->channels, 1);
  ASSERT_EQ(r->values.size(), 5u);
  EXPECT_EQ(r->values[0], 100.5f);
  EXPECT_EQ(r->values[1], 101.25f);
  EXPECT_TRUE(std::isnan(r->values[2]));
  EXPECT_EQ(r->values[3], 99.0f);
  EXPECT_EQ(r->values[4], 98.75f);
  EXPECT_EQ(r->source, path + ":/close");
  EXPECT_EQ(r->column, "/close");

  Result<Series> relative = series_load_hdf5(path, "close", false);
  ASSERT_TRUE(relative.is_ok()) << relative.status().to_string();
  EXPECT_EQ(relative->rows, 5);
}

TEST_F(SeriesHdf5, ReadsChunkedFloat64Ohlc) { test::expect_ohlc(series_load_hdf5(path, "/prices/ohlc", true), kOhlc); }

TEST_F(SeriesHdf5, ConvertsBigEndianIntegers) {
  Result<Series> r = series_load_hdf5(path, "/ints", false);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->channels, 1);
  EXPECT_EQ(r->values, (std::vector<float>{3, -4, 5}));
}

TEST_F(SeriesHdf5, MissingDatasetListsDatasets) {
  Result<Series> r = series_load_hdf5(path, "/prices/close", false);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kInvalidArgument);
  const std::string& m = r.status().message();
  EXPECT_EQ(m.rfind(path + ": no dataset '/prices/close' (datasets: ", 0), 0u) << m;
  EXPECT_NE(m.find("/close"), std::string::npos) << m;
  EXPECT_NE(m.find("/prices/ohlc"), std::string::npos) << m;

  Result<Series> group = series_load_hdf5(path, "/prices", false);
  ASSERT_FALSE(group.is_ok());
  EXPECT_EQ(group.status().code(), Errc::kInvalidArgument);
  EXPECT_EQ(group.status().message().rfind(path + ": '/prices' is not a dataset", 0), 0u) << group.status().message();
}

TEST_F(SeriesHdf5, ShapeAndTypeErrors) {
  struct Case {
    std::string dataset;
    bool ohlc;
    Errc code;
    std::string named;
  };
  const std::vector<Case> cases = {
      {"/close", true, Errc::kInvalidArgument, "(5,)"},       {"/ints", true, Errc::kInvalidArgument, "(3, 1)"},
      {"/wide", false, Errc::kUnsupportedFormat, "(2, 3)"},   {"/cube", false, Errc::kUnsupportedFormat, "(2, 2, 2)"},
      {"/scalar", false, Errc::kUnsupportedFormat, "()"},     {"/names", false, Errc::kUnsupportedFormat, "string"},
      {"/empty", false, Errc::kIoError, "no data rows"},
  };
  for (const Case& c : cases) {
    Result<Series> r = series_load_hdf5(path, c.dataset, c.ohlc);
    ASSERT_FALSE(r.is_ok()) << c.dataset;
    EXPECT_EQ(r.status().code(), c.code) << c.dataset << ": " << r.status().message();
    EXPECT_EQ(r.status().message().rfind(path + ":" + c.dataset + ": ", 0), 0u) << r.status().message();
    EXPECT_NE(r.status().message().find(c.named), std::string::npos) << r.status().message();
  }
}

TEST_F(SeriesHdf5, NotHdf5AndMissingFile) {
  const std::string text = dir.file("text.h5");
  test::write_text_file(text, "Close\n1\n");
  ASSERT_TRUE(load_failed(series_load_hdf5(text, "/close", false), Errc::kUnsupportedFormat,
                          text + ": not an HDF5 file"));

  const std::string missing = dir.file("missing.h5");
  ASSERT_TRUE(load_failed(series_load_hdf5(missing, "/close", false), Errc::kIoError, missing + ": no such file"));
}

TEST_F(SeriesHdf5, ErrorsDoNotPrintHdf5Traces) {
  const std::string text = dir.file("text.h5");
  test::write_text_file(text, "not hdf5");
  testing::internal::CaptureStderr();
  EXPECT_FALSE(series_load_hdf5(path, "/nope/deeper", false).is_ok());
  EXPECT_FALSE(series_load_hdf5(path, "/prices", false).is_ok());
  EXPECT_FALSE(series_load_hdf5(text, "/x", false).is_ok());
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(printed, "");
}

// A few KB declaring 2^40 values (nothing stored) aborted kiln with bad_alloc; one declaring 10^9 compressed values
// with one chunk stored ran for minutes at 15 GB. Both are refused from the header.
TEST(SeriesHdf5Limits, DeclaredSizeBeyondWhatTheFileStoresIsRefused) {
  TempDir dir;
  const std::string path = dir.file("declared.h5");
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  write_dataset(file, "huge", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {hsize_t{1} << 40}, nullptr);
  {
    const hsize_t dims[1] = {1000000000};
    const hsize_t chunk[1] = {4096};
    const hid_t space = H5Screate_simple(1, dims, nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, chunk);
    H5Pset_deflate(dcpl, 4);
    const hid_t ds = H5Dcreate2(file, "sparse", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    std::vector<float> first(4096);
    for (size_t i = 0; i < first.size(); ++i) first[i] = 100.0f + static_cast<float>(i % 97);
    const hid_t mem = H5Screate_simple(1, chunk, nullptr);
    const hsize_t start[1] = {0};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, chunk, nullptr);
    EXPECT_GE(H5Dwrite(ds, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, first.data()), 0);
    H5Sclose(mem);
    H5Dclose(ds);
    H5Pclose(dcpl);
    H5Sclose(space);
  }
  H5Fclose(file);
  for (const char* name : {"/huge", "/sparse"}) {
    const Result<Series> r = series_load_hdf5(path, name, false);
    ASSERT_FALSE(r.is_ok()) << name;
    EXPECT_EQ(r.status().code(), Errc::kIoError) << r.status().message();
    EXPECT_NE(r.status().message().find("declares"), std::string::npos) << r.status().message();
  }
}

TEST(SeriesLoad, DispatchesHdf5WithDatasetPath) {
  TempDir dir;
  const std::string path = make_file(dir);
  SeriesSource source;
  source.path = path + ":/prices/ohlc";
  source.ohlc = true;
  Result<Series> r = series_load(source);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->channels, 4);
  EXPECT_EQ(r->rows, 3);
  EXPECT_EQ(r->source, path + ":/prices/ohlc");
  EXPECT_EQ(r->column, "Open,High,Low,Close");

  source.path = path + ":/close";
  source.ohlc = false;
  r = series_load(source);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->rows, 5);
  EXPECT_EQ(r->column, "/close");
}

TEST(SeriesLoad, Hdf5PathWithoutDatasetAsksForOne) {
  TempDir dir;
  const std::string path = make_file(dir);
  SeriesSource source;
  source.path = path;
  Result<Series> r = series_load(source);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kInvalidArgument);
  EXPECT_EQ(r.status().message().rfind(path + ": name the dataset", 0), 0u) << r.status().message();
  EXPECT_NE(r.status().message().find("/prices/ohlc"), std::string::npos) << r.status().message();

  source.path = dir.file("gone.hdf5") + ":/close";
  ASSERT_TRUE(load_failed(series_load(source), Errc::kIoError, dir.file("gone.hdf5") + ": no such file"));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// A fuzzed file on which HDF5 1.10 dereferences a null pointer in H5Oopen (local heap lookup): the reader's process
// dies, kiln's does not, and the error names the file.
TEST(SeriesHdf5Limits, AFileThatCrashesTheHdf5LibraryIsAnError) {
  const std::string corpus = std::string(KILN_SOURCE_DIR) + "/fuzz/corpus/series_hdf5/";
  auto series = series_load_hdf5(corpus + "crash-hdf5-local-heap-null-memcpy.h5", "close", false);
  ASSERT_FALSE(series.is_ok());
  EXPECT_EQ(series.status().code(), Errc::kUnsupportedFormat);
  const std::string& message = series.status().message();
  EXPECT_NE(message.find("crash-hdf5-local-heap-null-memcpy.h5: the reader crashed"), std::string::npos) << message;
  EXPECT_TRUE(series_load_hdf5(corpus + "goog.h5", "close", false).is_ok());
}

}  // namespace
}  // namespace kiln
