// HDF5 tables for series_load (series_hdf5.h): a compound dataset's fields or a group's 1-D datasets read as the
// columns of a CSV would be, into CsvRows, so that a panel goes on from there as a CSV's does (panel_from_rows).
// Read in a child process, like series_load_hdf5 (libhdf5 1.10 crashes on some malformed files).
#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "apps/render/series_hdf5.h"
#include "core/isolated_call.h"
#include "io/hdf5_handle.h"
#include "io/hdf5_zstd_register.h"

namespace kiln {

namespace {

bool column_name_equals(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x >= 'A' && x <= 'Z' ? x - 'A' + 'a' : x) == (y >= 'A' && y <= 'Z' ? y - 'A' + 'a' : y);
         });
}

std::string text_trimmed(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  size_t first = 0;
  while (first < s.size() && s[first] == ' ') ++first;
  return s.substr(first);
}

// An integer date: yyyymmdd, or nanoseconds since 1970 for a pandas datetime64 column; 0 when not a date.
int32_t date_of_integer(int64_t value, bool nanoseconds) {
  constexpr int64_t kNanosPerDay = 86'400'000'000'000;
  if (nanoseconds) return date_of_day(value / kNanosPerDay - (value % kNanosPerDay < 0 ? 1 : 0));
  if (value < 1'000'01'01 || value > 9999'12'31) return 0;
  return date_parse(std::to_string(value));
}

// The columns of one table: the fields of a compound dataset, or the 1-D datasets of a group.
class Hdf5Table {
 public:
  static Result<Hdf5Table> open(hid_t object, const std::string& where, uint64_t file_size);
  const std::vector<std::string>& names() const { return m_names; }
  int64_t rows() const { return m_rows; }
  // The column's name as the file spells it, matched case-insensitively; "" when absent.
  std::string find(const std::string& name) const;
  std::string list() const;  // "Symbol, Date, Close" for errors
  H5T_class_t type_class(const std::string& name) const;
  bool is_datetime(const std::string& name) const;  // pandas' datetime64 (int64 nanoseconds)
  Status read_floats(const std::string& name, std::vector<float>* out) const;
  Status read_integers(const std::string& name, std::vector<int64_t>* out) const;
  Status read_strings(const std::string& name, std::vector<std::string>* out) const;

 private:
  // The column's rows (a group's columns are checked to agree, and against what the file stores, as they are read).
  Result<int64_t> column_rows(const std::string& name) const;
  // Reads the column as `mem_type`; `use` sees the data before variable-length strings are freed.
  Status read(const std::string& name, hid_t mem_type, void* data, const std::function<void()>& use = {}) const;
  hdf5::Handle column_type(const std::string& name) const;

  std::string m_where;
  hdf5::Handle m_compound;  // the compound dataset, or invalid for a group of columns
  hdf5::Handle m_group;  // or the group of columns
  std::vector<std::string> m_names;
  uint64_t m_file_size = 0;
  mutable int64_t m_rows = 0;  // a group's: -1 until its first column is read
  mutable std::string m_first_read;
};

struct Hdf5GroupListing {
  std::vector<std::string> datasets;
};

herr_t collect_column(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  if (info == nullptr || info->type != H5L_TYPE_HARD) return 0;
  H5O_info_t object;
  if (H5Oget_info_by_name(group, name, &object, H5P_DEFAULT) < 0 || object.type != H5O_TYPE_DATASET) return 0;
  static_cast<Hdf5GroupListing*>(data)->datasets.emplace_back(name);
  return 0;
}

Result<int64_t> column_length(hid_t dataset, const std::string& where) {
  hdf5::Handle space = hdf5::space_handle(H5Dget_space(dataset));
  hsize_t dims[1] = {0};
  if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != 1) {
    return invalid_argument(where + ": a table's columns are 1-D (one value per row)");
  }
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  return static_cast<int64_t>(dims[0]);
}

Result<Hdf5Table> Hdf5Table::open(hid_t object, const std::string& where, uint64_t file_size) {
  Hdf5Table table;
  table.m_where = where;
  table.m_file_size = file_size;
  if (H5Iget_type(object) == H5I_GROUP) {
    if (H5Lexists(object, "table", H5P_DEFAULT) > 0) {  // pandas' to_hdf(format="table")
      hdf5::Handle inner = hdf5::dataset_handle(H5Dopen2(object, "table", H5P_DEFAULT));
      hdf5::Handle type = hdf5::type_handle(inner.valid() ? H5Dget_type(inner.get()) : H5I_INVALID_HID);
      if (type.valid() && H5Tget_class(type.get()) == H5T_COMPOUND) {
        return Hdf5Table::open(inner.get(), where + "/table", file_size);
      }
      H5Eclear2(H5E_DEFAULT);
    }
    Hdf5GroupListing listing;
    H5Literate(object, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_column, &listing);
    if (listing.datasets.empty()) return invalid_argument(where + ": the group holds no dataset (no column)");
    if (H5Iinc_ref(object) < 0) return hdf5::error(where + ": cannot open");
    table.m_group = hdf5::group_handle(object);
    table.m_names = listing.datasets;
    table.m_rows = -1;  // per column: checked as each is read
    return table;
  }
  hdf5::Handle type = hdf5::type_handle(H5Dget_type(object));
  if (!type.valid()) return hdf5::error(where + ": cannot read the type");
  KILN_TRY_ASSIGN(table.m_rows, column_length(object, where));
  if (table.m_rows == 0) return io_error(where + ": no data rows");
  KILN_TRY(hdf5_declared_size_check(object, type.get(), static_cast<uint64_t>(table.m_rows), where, file_size));
  const int fields = H5Tget_nmembers(type.get());
  for (int i = 0; i < fields; ++i) {
    char* name = H5Tget_member_name(type.get(), static_cast<unsigned>(i));
    if (name == nullptr) return hdf5::error(where + ": cannot read the field names");
    table.m_names.emplace_back(name);
    H5free_memory(name);
  }
  if (H5Iinc_ref(object) < 0) return hdf5::error(where + ": cannot open");
  table.m_compound = hdf5::dataset_handle(object);  // its own reference: `object` may be closed first
  return table;
}

std::string Hdf5Table::find(const std::string& name) const {
  for (const std::string& have : m_names) {
    if (column_name_equals(have, text_trimmed(name))) return have;
  }
  return "";
}

std::string Hdf5Table::list() const {
  constexpr size_t kMaxListed = 16;
  std::string out;
  for (size_t i = 0; i < m_names.size() && i < kMaxListed; ++i) out += (i > 0 ? ", " : "") + m_names[i];
  if (m_names.size() > kMaxListed) out += ", ... (" + std::to_string(m_names.size()) + " in all)";
  return out;
}

hdf5::Handle Hdf5Table::column_type(const std::string& name) const {
  if (m_compound.valid()) {
    hdf5::Handle type = hdf5::type_handle(H5Dget_type(m_compound.get()));
    const int index = type.valid() ? H5Tget_member_index(type.get(), name.c_str()) : -1;
    const auto member = static_cast<unsigned>(index);
    return hdf5::type_handle(index < 0 ? H5I_INVALID_HID : H5Tget_member_type(type.get(), member));
  }
  hdf5::Handle dataset = hdf5::dataset_handle(H5Dopen2(m_group.get(), name.c_str(), H5P_DEFAULT));
  return hdf5::type_handle(dataset.valid() ? H5Dget_type(dataset.get()) : H5I_INVALID_HID);
}

H5T_class_t Hdf5Table::type_class(const std::string& name) const {
  hdf5::Handle type = column_type(name);
  return type.valid() ? H5Tget_class(type.get()) : H5T_NO_CLASS;
}

bool Hdf5Table::is_datetime(const std::string& name) const {
  if (!m_compound.valid()) return false;
  const std::string attribute = name + "_dtype";
  if (H5Aexists(m_compound.get(), attribute.c_str()) <= 0) return false;
  hdf5::Handle attr = hdf5::attribute_handle(H5Aopen(m_compound.get(), attribute.c_str(), H5P_DEFAULT));
  hdf5::Handle type = hdf5::type_handle(attr.valid() ? H5Aget_type(attr.get()) : H5I_INVALID_HID);
  // PyTables writes it as a fixed-length UTF-8 string: read in its own type (HDF5 converts no charsets).
  if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0) return false;
  std::string dtype(H5Tget_size(type.get()), '\0');
  if (H5Aread(attr.get(), type.get(), dtype.data()) < 0) return false;
  return dtype.rfind("datetime64", 0) == 0;
}

Result<int64_t> Hdf5Table::column_rows(const std::string& name) const {
  if (m_compound.valid()) return m_rows;
  const std::string where = m_where + "/" + name;
  hdf5::Handle dataset = hdf5::dataset_handle(H5Dopen2(m_group.get(), name.c_str(), H5P_DEFAULT));
  hdf5::Handle type = hdf5::type_handle(dataset.valid() ? H5Dget_type(dataset.get()) : H5I_INVALID_HID);
  if (!type.valid()) return hdf5::error(where + ": cannot open");
  KILN_TRY_ASSIGN(const int64_t rows, column_length(dataset.get(), where));
  if (rows == 0) return io_error(where + ": no data rows");
  if (m_rows >= 0 && !m_first_read.empty() && rows != m_rows) {
    return invalid_argument(m_where + ": column '" + name + "' has " + std::to_string(rows) + " rows, '" +
                            m_first_read + "' " + std::to_string(m_rows));
  }
  KILN_TRY(hdf5_declared_size_check(dataset.get(), type.get(), static_cast<uint64_t>(rows), where, m_file_size));
  m_rows = rows;
  m_first_read = name;
  return rows;
}

Status Hdf5Table::read(const std::string& name, hid_t mem_type, void* data, const std::function<void()>& use) const {
  KILN_TRY_ASSIGN(const int64_t rows, column_rows(name));
  if (rows == 0) return Status::ok();
  hdf5::Handle dataset;
  hdf5::Handle record;
  hid_t read_type = mem_type;
  if (m_compound.valid()) {
    record = hdf5::type_handle(H5Tcreate(H5T_COMPOUND, H5Tget_size(mem_type)));
    if (!record.valid() || H5Tinsert(record.get(), name.c_str(), 0, mem_type) < 0) {
      return hdf5::error(m_where + ": cannot read the field " + name);
    }
    read_type = record.get();
  } else {
    dataset = hdf5::dataset_handle(H5Dopen2(m_group.get(), name.c_str(), H5P_DEFAULT));
  }
  const hid_t source = m_compound.valid() ? m_compound.get() : dataset.get();
  if (H5Dread(source, read_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    return hdf5::error(m_where + ": cannot read the column " + name);
  }
  if (use) use();
  if (H5Tdetect_class(mem_type, H5T_VLEN) > 0 || H5Tis_variable_str(mem_type) > 0) {
    hdf5::Handle space = hdf5::space_handle(H5Dget_space(source));
    H5Dvlen_reclaim(read_type, space.get(), H5P_DEFAULT, data);
  }
  return Status::ok();
}

Status Hdf5Table::read_floats(const std::string& name, std::vector<float>* out) const {
  const H5T_class_t cls = type_class(name);
  if (cls != H5T_INTEGER && cls != H5T_FLOAT) {
    return invalid_argument(m_where + ": column '" + name + "' holds " + hdf5_type_class_name(cls) +
                            " values (expected numbers)");
  }
  KILN_TRY_ASSIGN(const int64_t rows, column_rows(name));
  out->resize(static_cast<size_t>(rows));
  return read(name, H5T_NATIVE_FLOAT, out->data());
}

Status Hdf5Table::read_integers(const std::string& name, std::vector<int64_t>* out) const {
  KILN_TRY_ASSIGN(const int64_t rows, column_rows(name));
  out->resize(static_cast<size_t>(rows));
  return read(name, H5T_NATIVE_INT64, out->data());
}

Status Hdf5Table::read_strings(const std::string& name, std::vector<std::string>* out) const {
  hdf5::Handle type = column_type(name);
  if (!type.valid()) return hdf5::error(m_where + ": cannot read the type of " + name);
  hdf5::Handle mem = hdf5::type_handle(H5Tcopy(type.get()));  // the file's own string type: no charset conversion
  KILN_TRY_ASSIGN(const int64_t rows, column_rows(name));
  const auto n = static_cast<size_t>(rows);
  out->clear();
  out->reserve(n);
  if (H5Tis_variable_str(type.get()) > 0) {
    std::vector<char*> texts(n, nullptr);
    return read(name, mem.get(), texts.data(), [&] {
      for (const char* text : texts) out->push_back(text_trimmed(text != nullptr ? text : ""));
    });
  }
  const size_t width = H5Tget_size(type.get());
  std::vector<char> bytes(n * width);
  KILN_TRY(read(name, mem.get(), bytes.data()));
  for (size_t i = 0; i < n; ++i) {
    const char* text = bytes.data() + i * width;
    out->push_back(text_trimmed(std::string(text, strnlen(text, width))));
  }
  return Status::ok();
}

// The dates of column `name`: yyyymmdd integers, pandas datetime64 or date strings; 0 where not a date.
Status dates_read(const Hdf5Table& table, const std::string& name, const std::string& where,
                  std::vector<int32_t>* out) {
  const H5T_class_t cls = table.type_class(name);
  if (cls == H5T_INTEGER) {
    std::vector<int64_t> values;
    KILN_TRY(table.read_integers(name, &values));
    const bool nanoseconds = table.is_datetime(name);
    for (const int64_t v : values) out->push_back(date_of_integer(v, nanoseconds));
    return Status::ok();
  }
  if (cls == H5T_STRING) {
    std::vector<std::string> texts;
    KILN_TRY(table.read_strings(name, &texts));
    for (const std::string& text : texts) out->push_back(date_parse(text));
    return Status::ok();
  }
  return invalid_argument(where + ": column '" + name + "' holds " + hdf5_type_class_name(cls) +
                          " values (expected yyyymmdd integers or dates as text)");
}

Status symbols_read(const Hdf5Table& table, const std::string& name, const std::string& where, CsvRows* rows) {
  std::vector<std::string> texts;
  const H5T_class_t cls = table.type_class(name);
  if (cls == H5T_INTEGER) {
    std::vector<int64_t> ids;  // PERMNO
    KILN_TRY(table.read_integers(name, &ids));
    texts.reserve(ids.size());
    for (const int64_t id : ids) texts.push_back(std::to_string(id));
  } else if (cls == H5T_STRING) {
    KILN_TRY(table.read_strings(name, &texts));
  } else {
    return invalid_argument(where + ": symbol column '" + name + "' holds " + hdf5_type_class_name(cls) +
                            " values (expected text or integer ids)");
  }
  std::unordered_map<std::string, int32_t> ids;
  rows->symbol_of_row.reserve(texts.size());
  for (size_t r = 0; r < texts.size(); ++r) {
    if (texts[r].empty()) return io_error(where + ": data row " + std::to_string(r + 1) + ": no symbol");
    const auto [at, added] = ids.try_emplace(texts[r], static_cast<int32_t>(rows->symbol_names.size()));
    if (added) rows->symbol_names.push_back(texts[r]);
    rows->symbol_of_row.push_back(at->second);
  }
  return Status::ok();
}

Result<CsvRows> table_rows_read(const Hdf5Table& table, const std::string& where, const std::string& column, bool ohlc,
                                const std::string& volume_column, const CsvPanelColumns& panel) {
  std::vector<std::string> wanted = ohlc ? std::vector<std::string>{"Open", "High", "Low", "Close"}
                                         : std::vector<std::string>{column.empty() ? std::string("Close") : column};
  if (!volume_column.empty()) wanted.push_back(volume_column);
  std::vector<std::string> names;
  for (const std::string& want : wanted) {
    names.push_back(table.find(want));
    if (names.back().empty()) {
      return invalid_argument(where + ": no column '" + text_trimmed(want) + "' (columns: " + table.list() + ")");
    }
  }
  std::string symbol_name;
  for (size_t i = 0; i < panel.symbol_columns.size() && symbol_name.empty(); ++i) {
    symbol_name = table.find(panel.symbol_columns[i]);
  }
  if (symbol_name.empty() && panel.symbol_required) {
    return invalid_argument(where + ": no symbol column '" + panel.symbol_columns.front() +
                            "' (columns: " + table.list() + ")");
  }
  const std::string cap_name = panel.market_cap_column.empty() ? "" : table.find(panel.market_cap_column);
  if (!panel.market_cap_column.empty() && cap_name.empty()) {
    return invalid_argument(where + ": no market-cap column '" + panel.market_cap_column +
                            "' (columns: " + table.list() + ")");
  }

  CsvRows rows;
  Series& series = rows.series;
  series.channels = static_cast<int32_t>(names.size());
  series.layers = volume_column.empty() ? 0 : 1;
  series.source = where;
  series.column = ohlc ? std::string("Open,High,Low,Close") : names.front();
  std::vector<float> values;
  for (size_t c = 0; c < names.size(); ++c) {
    KILN_TRY(table.read_floats(names[c], &values));
    if (values.empty()) return io_error(where + ": no data rows");
    if (c == 0) {
      series.rows = static_cast<int64_t>(values.size());
      series.values.resize(values.size() * names.size());
    }
    for (size_t r = 0; r < values.size(); ++r) series.values[r * names.size() + c] = values[r];
  }
  if (const std::string date_name = table.find("Date"); !date_name.empty()) {
    KILN_TRY(dates_read(table, date_name, where, &series.dates));
  }
  if (!symbol_name.empty()) KILN_TRY(symbols_read(table, symbol_name, where, &rows));
  if (!cap_name.empty()) KILN_TRY(table.read_floats(cap_name, &rows.market_caps));
  return rows;
}

// CsvRows as bytes for the trip from the reader's process: counts, then the column name, values, dates, symbols of
// the rows, symbol names (length, bytes) and market caps.
std::vector<uint8_t> rows_bytes(const CsvRows& rows) {
  std::vector<uint8_t> out;
  const auto put = [&out](const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    out.insert(out.end(), p, p + size);
  };
  const Series& s = rows.series;
  const int64_t header[7] = {s.rows,
                             s.channels,
                             s.layers,
                             static_cast<int64_t>(s.column.size()),
                             static_cast<int64_t>(s.dates.size()),
                             static_cast<int64_t>(rows.symbol_names.size()),
                             static_cast<int64_t>(rows.market_caps.size())};
  put(header, sizeof(header));
  put(s.column.data(), s.column.size());
  put(s.values.data(), s.values.size() * sizeof(float));
  put(s.dates.data(), s.dates.size() * sizeof(int32_t));
  if (!rows.symbol_names.empty()) put(rows.symbol_of_row.data(), rows.symbol_of_row.size() * sizeof(int32_t));
  for (const std::string& name : rows.symbol_names) {
    const int64_t size = static_cast<int64_t>(name.size());
    put(&size, sizeof(size));
    put(name.data(), name.size());
  }
  put(rows.market_caps.data(), rows.market_caps.size() * sizeof(float));
  return out;
}

Result<CsvRows> rows_from_bytes(const std::vector<uint8_t>& bytes, const std::string& where) {
  size_t at = 0;
  bool short_read = false;
  const auto take = [&](void* data, size_t size) {
    if (short_read || size > bytes.size() - at) {
      short_read = true;
      return;
    }
    if (size > 0) std::memcpy(data, bytes.data() + at, size);
    at += size;
  };
  int64_t header[7];
  take(header, sizeof(header));
  for (const int64_t h : header) short_read = short_read || h < 0 || static_cast<uint64_t>(h) > bytes.size();
  if (short_read) return io_error(where + ": the reader returned an inconsistent table");
  CsvRows rows;
  Series& s = rows.series;
  s.rows = header[0];
  s.channels = static_cast<int32_t>(header[1]);
  s.layers = static_cast<int32_t>(header[2]);
  const auto n = static_cast<size_t>(s.rows);
  if (static_cast<uint64_t>(s.channels) * n * sizeof(float) > bytes.size()) {
    return io_error(where + ": the reader returned an inconsistent table");
  }
  s.column.resize(static_cast<size_t>(header[3]));
  take(s.column.data(), s.column.size());
  s.values.resize(n * static_cast<size_t>(s.channels));
  take(s.values.data(), s.values.size() * sizeof(float));
  s.dates.resize(static_cast<size_t>(header[4]));
  take(s.dates.data(), s.dates.size() * sizeof(int32_t));
  if (header[5] > 0) {
    rows.symbol_of_row.resize(n);
    take(rows.symbol_of_row.data(), n * sizeof(int32_t));
  }
  for (int64_t k = 0; k < header[5] && !short_read; ++k) {
    int64_t size = 0;
    take(&size, sizeof(size));
    if (size < 0 || static_cast<uint64_t>(size) > bytes.size()) short_read = true;
    if (short_read) break;
    std::string name(static_cast<size_t>(size), '\0');
    take(name.data(), name.size());
    rows.symbol_names.push_back(std::move(name));
  }
  rows.market_caps.resize(static_cast<size_t>(header[6]));
  take(rows.market_caps.data(), rows.market_caps.size() * sizeof(float));
  if (short_read || at != bytes.size()) return io_error(where + ": the reader returned an inconsistent table");
  for (const int32_t symbol : rows.symbol_of_row) {
    if (symbol < 0 || static_cast<size_t>(symbol) >= rows.symbol_names.size()) {
      return io_error(where + ": the reader returned an inconsistent table");
    }
  }
  return rows;
}

// Reads the table at `dataset` in this process: nullopt (as no bytes) when it names a dataset that is not compound.
Result<std::vector<uint8_t>> table_read_here(const std::string& path, const std::string& dataset,
                                             const std::string& column, bool ohlc, const std::string& volume_column,
                                             const CsvPanelColumns& panel) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return io_error(path + ": not a regular file");
  hdf5::ErrorScope quiet;
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return unsupported_format(path + ": not an HDF5 file");
  }
  KILN_TRY(hdf5_zstd_register());
  hdf5::Handle file = hdf5::file_handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file.valid()) return hdf5::error(path + ": cannot open");
  const std::string where = path + ":" + dataset;
  hdf5::Handle object(H5Oopen(file.get(), dataset.c_str(), H5P_DEFAULT), H5Oclose);
  if (!object.valid()) {
    H5Eclear2(H5E_DEFAULT);
    return invalid_argument(path + ": no dataset or group '" + dataset + "'" + hdf5_dataset_listing(file.get()));
  }
  const H5I_type_t kind = H5Iget_type(object.get());
  if (kind == H5I_DATASET) {
    hdf5::Handle type = hdf5::type_handle(H5Dget_type(object.get()));
    if (!type.valid()) return hdf5::error(where + ": cannot read the type");
    if (H5Tget_class(type.get()) != H5T_COMPOUND) return std::vector<uint8_t>();
  } else if (kind != H5I_GROUP) {
    return invalid_argument(path + ": '" + dataset + "' is neither a dataset nor a group");
  }
  KILN_TRY_ASSIGN(const Hdf5Table table, Hdf5Table::open(object.get(), where, std::filesystem::file_size(path, ec)));
  KILN_TRY_ASSIGN(const CsvRows rows, table_rows_read(table, where, column, ohlc, volume_column, panel));
  return rows_bytes(rows);
}

}  // namespace

Result<std::optional<CsvRows>> series_load_hdf5_rows(const std::string& path, const std::string& dataset,
                                                     const std::string& column, bool ohlc,
                                                     const std::string& volume_column, const CsvPanelColumns& panel) {
  const auto read = [&]() { return table_read_here(path, dataset, column, ohlc, volume_column, panel); };
  KILN_TRY_ASSIGN(const std::vector<uint8_t> bytes, isolated_call(read, path));
  if (bytes.empty()) return std::optional<CsvRows>();
  KILN_TRY_ASSIGN(CsvRows rows, rows_from_bytes(bytes, path + ":" + dataset));
  return std::optional<CsvRows>(std::move(rows));
}

}  // namespace kiln
