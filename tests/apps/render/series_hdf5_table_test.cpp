// Panels from HDF5 tables (series_hdf5.h) and the per-image table's checksum (hdf5_image_table.h). Test files are
// written with the HDF5 C API.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "apps/render/hdf5_image_table.h"
#include "common/test_util.h"
#include "kiln/apps/render.h"

namespace kiln {
namespace {

using test::TempDir;

// Five rows of two symbols, out of order; B lacks 2020-01-03.
struct Row {
  char symbol[4];
  int32_t date;
  double close;
};
const Row kRows[] = {{"B", 20200106, 21.5}, {"A", 20200102, 10.25}, {"B", 20200102, 20.5},
                     {"A", 20200103, 11.0},  {"A", 20200106, 12.75}};
constexpr hsize_t kRowCount = sizeof(kRows) / sizeof(kRows[0]);

std::string write_csv(const TempDir& dir) {
  const std::string path = dir.file("panel.csv");
  std::ofstream out(path);
  out << "Symbol,Date,Close\n";
  for (const Row& r : kRows) out << r.symbol << "," << r.date << "," << r.close << "\n";
  return path;
}

hid_t symbol_type() {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, sizeof(Row::symbol));
  H5Tset_strpad(type, H5T_STR_NULLPAD);
  return type;
}

// /prices: compound {Symbol, Date, Close}; /columns: group of 1-D datasets; /huge: a compound declaring 2^40 rows
// with nothing stored.
std::string write_hdf5(const TempDir& dir) {
  const std::string path = dir.file("panel.h5");
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t text = symbol_type();
  const hid_t record = H5Tcreate(H5T_COMPOUND, sizeof(Row));
  H5Tinsert(record, "Symbol", HOFFSET(Row, symbol), text);
  H5Tinsert(record, "Date", HOFFSET(Row, date), H5T_NATIVE_INT32);
  H5Tinsert(record, "Close", HOFFSET(Row, close), H5T_NATIVE_DOUBLE);
  const hsize_t rows[1] = {kRowCount};
  hid_t space = H5Screate_simple(1, rows, nullptr);
  hid_t ds = H5Dcreate2(file, "prices", record, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(H5Dwrite(ds, record, H5S_ALL, H5S_ALL, H5P_DEFAULT, kRows), 0);
  H5Dclose(ds);

  const hid_t group = H5Gcreate2(file, "columns", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<char> symbols;
  std::vector<float> closes;
  std::vector<char> dates;  // "yyyy-mm-dd" text, 10 bytes each
  for (const Row& r : kRows) {
    symbols.insert(symbols.end(), r.symbol, r.symbol + sizeof(r.symbol));
    closes.push_back(static_cast<float>(r.close));
    const std::string d = std::to_string(r.date);
    const std::string iso = d.substr(0, 4) + "-" + d.substr(4, 2) + "-" + d.substr(6, 2);
    dates.insert(dates.end(), iso.begin(), iso.end());
  }
  const hid_t date_text = H5Tcopy(H5T_C_S1);
  H5Tset_size(date_text, 10);
  const struct {
    const char* name;
    hid_t type;
    const void* data;
  } columns[] = {{"Symbol", text, symbols.data()}, {"Date", date_text, dates.data()},
                 {"Close", H5T_NATIVE_FLOAT, closes.data()}};
  for (const auto& c : columns) {
    ds = H5Dcreate2(group, c.name, c.type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    EXPECT_GE(H5Dwrite(ds, c.type, H5S_ALL, H5S_ALL, H5P_DEFAULT, c.data), 0) << c.name;
    H5Dclose(ds);
  }
  H5Sclose(space);

  const hsize_t huge[1] = {hsize_t{1} << 40};
  const hsize_t unlimited[1] = {H5S_UNLIMITED};
  const hsize_t chunk[1] = {1024};
  space = H5Screate_simple(1, huge, unlimited);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, chunk);
  ds = H5Dcreate2(file, "huge", record, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Tclose(date_text);
  H5Gclose(group);
  H5Tclose(record);
  H5Tclose(text);
  H5Fclose(file);
  return path;
}

Result<Series> load(const std::string& path) {
  SeriesSource source;
  source.path = path;
  return series_load(source);
}

void expect_same_panel(const Series& a, const Series& b) {
  EXPECT_EQ(a.symbols, b.symbols);
  EXPECT_EQ(a.symbol_rows, b.symbol_rows);
  EXPECT_EQ(a.dates, b.dates);
  EXPECT_EQ(a.absent_days, b.absent_days);
  EXPECT_EQ(a.column, b.column);
  ASSERT_EQ(a.values.size(), b.values.size());
  EXPECT_EQ(std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)), 0);
}

TEST(SeriesHdf5Table, CompoundAndGroupOfColumnsGiveTheCsvsPanel) {
  TempDir dir;
  Result<Series> csv = load(write_csv(dir));
  ASSERT_TRUE(csv.is_ok()) << csv.status().to_string();
  ASSERT_EQ(csv->symbols, (std::vector<std::string>{"A", "B"}));
  ASSERT_EQ(csv->absent_days, 1);  // B on 2020-01-03
  const std::string h5 = write_hdf5(dir);
  for (const char* dataset : {":/prices", ":/columns"}) {
    Result<Series> table = load(h5 + dataset);
    ASSERT_TRUE(table.is_ok()) << dataset << ": " << table.status().to_string();
    EXPECT_EQ(table->source, h5 + dataset);
    expect_same_panel(*csv, *table);
  }
}

TEST(SeriesHdf5Table, DeclaredRowsAreCheckedAgainstTheFileBeforeAllocating) {
  TempDir dir;
  const std::string h5 = write_hdf5(dir);
  const Result<Series> huge = load(h5 + ":/huge");
  ASSERT_FALSE(huge.is_ok());
  EXPECT_EQ(huge.status().code(), Errc::kIoError);
  EXPECT_NE(huge.status().message().find("declares 1099511627776 values"), std::string::npos)
      << huge.status().message();
}

TEST(SeriesHdf5Table, AMissingColumnIsNamedWithTheColumnsPresent) {
  TempDir dir;
  const std::string h5 = write_hdf5(dir);
  SeriesSource source;
  source.path = h5 + ":/prices";
  source.market_cap_column = "Cap";
  const Result<Series> r = series_load(source);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), h5 + ":/prices: no market-cap column 'Cap' (columns: Symbol, Date, Close)");
}

ImageTable two_images() {
  ImageTable t;
  t.symbols = {"AAPL", "MSFT"};
  t.symbol = {0, 1};
  t.start_date = {20200102, 20200103};
  t.end_date = {20200108, 20200109};
  t.ret_5d = {0.5, std::numeric_limits<double>::quiet_NaN()};
  t.ret_20d = {0.25, -0.125};
  t.ret_60d = {0.0, 1.0};
  t.market_cap = {1e9, 2e9};
  return t;
}

Status verify(const std::string& path) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const Status s = hdf5::image_table_verify(file, path);
  H5Fclose(file);
  return s;
}

TEST(ImageTableChecksum, AChangedValueIsReportedAndAFileWithoutOneIsNotChecked) {
  TempDir dir;
  const std::string path = dir.file("table.h5");
  H5Fclose(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  EXPECT_TRUE(verify(path).is_ok());  // no table, no table_checksum
  const ImageTable table = two_images();
  ASSERT_TRUE(hdf5::image_table_write(path, table).is_ok());
  ASSERT_TRUE(verify(path).is_ok());
  ImageTable renamed = table;
  renamed.symbols[1] = "MSFU";
  EXPECT_NE(hdf5::image_table_checksum(renamed), hdf5::image_table_checksum(table));

  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t ds = H5Dopen2(file, "end_date", H5P_DEFAULT);
  const int32_t changed[2] = {20200108, 20200110};
  H5Dwrite(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, changed);
  H5Dclose(ds);
  H5Fclose(file);
  const Status damaged = verify(path);
  ASSERT_FALSE(damaged.is_ok());
  EXPECT_EQ(damaged.code(), Errc::kIoError);
  EXPECT_EQ(damaged.message().rfind(path + " is damaged: table checksum ", 0), 0u) << damaged.message();

  const hid_t again = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Adelete(again, "table_checksum");  // as written before kiln kept it
  H5Fclose(again);
  EXPECT_TRUE(verify(path).is_ok());
}

}  // namespace
}  // namespace kiln
