// The panel table's datasets (hdf5_image_table.h): chunked, shuffled and deflated, one dataset per column.
#include "apps/render/hdf5_image_table.h"

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "apps/render/hdf5_dataset.h"
#include "io/crc32.h"
#include "io/durable_file.h"
#include "io/hdf5_handle.h"

namespace kiln::hdf5 {

namespace {

constexpr const char* kSymbol = "symbol";
constexpr const char* kInt32Columns[] = {"start_date", "end_date"};
constexpr const char* kDoubleColumns[] = {"ret_5d", "ret_20d", "ret_60d", "market_cap"};
constexpr hsize_t kChunkRows = 1 << 16;
constexpr const char* kChecksumAttribute = "table_checksum";

Status column_write(hid_t file, const char* name, hid_t file_type, hid_t mem_type, const void* data, int64_t rows) {
  if (H5Lexists(file, name, H5P_DEFAULT) > 0 && H5Ldelete(file, name, H5P_DEFAULT) < 0) {
    return error(std::string("cannot replace ") + name);
  }
  const hsize_t dims[1] = {static_cast<hsize_t>(rows)};
  const hsize_t max_dims[1] = {H5S_UNLIMITED};
  const hsize_t chunk[1] = {std::clamp<hsize_t>(dims[0], 1, kChunkRows)};
  Handle space = space_handle(H5Screate_simple(1, dims, max_dims));
  Handle dcpl = plist_handle(H5Pcreate(H5P_DATASET_CREATE));
  if (!space.valid() || !dcpl.valid() || H5Pset_chunk(dcpl.get(), 1, chunk) < 0 || H5Pset_shuffle(dcpl.get()) < 0 ||
      H5Pset_deflate(dcpl.get(), 1) < 0) {
    return error(std::string("cannot lay out ") + name);
  }
  Handle dataset = dataset_handle(
      H5Dcreate2(file, name, file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
  if (!dataset.valid() || (rows > 0 && H5Dwrite(dataset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)) {
    return error(std::string("cannot write ") + name);
  }
  return dataset.close();
}

Result<int64_t> column_rows(hid_t file, const char* name) {
  Handle dataset = dataset_handle(H5Dopen2(file, name, H5P_DEFAULT));
  Handle space = space_handle(dataset.valid() ? H5Dget_space(dataset.get()) : H5I_INVALID_HID);
  hsize_t dims[1] = {0};
  if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != 1 ||
      H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0) {
    return error(std::string("cannot read the shape of ") + name);
  }
  return static_cast<int64_t>(dims[0]);
}

Status column_read(hid_t file, const char* name, hid_t mem_type, void* data, int64_t rows) {
  KILN_TRY_ASSIGN(const int64_t stored, column_rows(file, name));
  if (stored != rows) return io_error(std::string(name) + " has " + std::to_string(stored) + " rows, symbol " +
                                             std::to_string(rows));
  Handle dataset = dataset_handle(H5Dopen2(file, name, H5P_DEFAULT));
  if (rows > 0 && H5Dread(dataset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    return error(std::string("cannot read ") + name);
  }
  return dataset.close();
}

Result<std::optional<ImageTable>> table_read(hid_t file, const std::string& path) {
  if (H5Lexists(file, kSymbol, H5P_DEFAULT) <= 0) return std::optional<ImageTable>();
  auto with_path = [&](const Status& s) { return s.is_ok() ? s : Status(s.code(), path + ": " + s.message()); };
  auto rows = column_rows(file, kSymbol);
  if (!rows.is_ok()) return with_path(rows.status());
  const int64_t n = rows.value();
  Handle dataset = dataset_handle(H5Dopen2(file, kSymbol, H5P_DEFAULT));
  Handle type = type_handle(dataset.valid() ? H5Dget_type(dataset.get()) : H5I_INVALID_HID);
  if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0) {
    return io_error(path + ": symbol is not a fixed-length string dataset");
  }
  const size_t width = H5Tget_size(type.get());
  std::vector<char> symbols(static_cast<size_t>(n) * width);
  if (n > 0 && H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, symbols.data()) < 0) {
    return error(path + ": cannot read symbol");
  }
  ImageTable table;
  std::unordered_map<std::string, int32_t> known;
  table.symbol.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const char* s = symbols.data() + static_cast<size_t>(i) * width;
    const auto [at, added] =
        known.try_emplace(std::string(s, strnlen(s, width)), static_cast<int32_t>(table.symbols.size()));
    if (added) table.symbols.push_back(at->first);
    table.symbol.push_back(at->second);
  }
  std::vector<int32_t>* ints[] = {&table.start_date, &table.end_date};
  for (size_t c = 0; c < 2; ++c) {
    ints[c]->resize(static_cast<size_t>(n));
    KILN_TRY(with_path(column_read(file, kInt32Columns[c], H5T_NATIVE_INT32, ints[c]->data(), n)));
  }
  std::vector<double>* doubles[] = {&table.ret_5d, &table.ret_20d, &table.ret_60d, &table.market_cap};
  for (size_t c = 0; c < 4; ++c) {
    doubles[c]->resize(static_cast<size_t>(n));
    KILN_TRY(with_path(column_read(file, kDoubleColumns[c], H5T_NATIVE_DOUBLE, doubles[c]->data(), n)));
  }
  return std::optional<ImageTable>(std::move(table));
}

Status checksum_attribute_write(hid_t file, const std::string& text) {
  if (H5Aexists(file, kChecksumAttribute) > 0 && H5Adelete(file, kChecksumAttribute) < 0) {
    return error(std::string("cannot replace ") + kChecksumAttribute);
  }
  KILN_TRY_ASSIGN(Handle type, string_type());
  Handle space = space_handle(H5Screate(H5S_SCALAR));
  Handle attr = attribute_handle(space.valid() ? H5Acreate2(file, kChecksumAttribute, type.get(), space.get(),
                                                            H5P_DEFAULT, H5P_DEFAULT)
                                               : H5I_INVALID_HID);
  const char* value = text.c_str();
  if (!attr.valid() || H5Awrite(attr.get(), type.get(), &value) < 0) {
    return error(std::string("cannot write ") + kChecksumAttribute);
  }
  return attr.close();
}

}  // namespace

std::string image_table_checksum(const ImageTable& table) {
  Crc32 crc;
  for (int64_t i = 0; i < table.size(); ++i) {
    const std::string& s = table.symbol_of(i);
    const uint64_t size = s.size();
    crc.update(&size, sizeof(size));
    crc.update(s.data(), s.size());
  }
  for (const std::vector<int32_t>* column : {&table.start_date, &table.end_date}) {
    crc.update(column->data(), column->size() * sizeof(int32_t));
  }
  for (const std::vector<double>* column : {&table.ret_5d, &table.ret_20d, &table.ret_60d, &table.market_cap}) {
    crc.update(column->data(), column->size() * sizeof(double));
  }
  return "crc32 table=" + crc.hex();
}

Result<std::optional<ImageTable>> image_table_read(const std::string& path) {
  KILN_TRY_ASSIGN(Handle file, file_open_read(path));
  KILN_TRY_ASSIGN(std::optional<ImageTable> table, table_read(file.get(), path));
  KILN_TRY(file.close());
  return table;
}

Status image_table_verify(hid_t file, const std::string& path) {
  const htri_t exists = H5Aexists(file, kChecksumAttribute);
  if (exists < 0) return error(path + ": cannot check attribute " + kChecksumAttribute);
  if (exists == 0) return Status::ok();
  Handle attr = attribute_handle(H5Aopen(file, kChecksumAttribute, H5P_DEFAULT));
  KILN_TRY_ASSIGN(const std::string stored, attribute_read_string(attr.get(), kChecksumAttribute));
  Result<std::optional<ImageTable>> table = table_read(file, path);
  if (!table.is_ok()) return io_error(path + " is damaged: table unreadable: " + table.status().message());
  if (!table->has_value()) return io_error(path + " is damaged: table checksum stored, but no table");
  const std::string now = image_table_checksum(**table);
  if (now == stored) return Status::ok();
  const auto crc_of = [](const std::string& text) { return text.substr(text.find('=') + 1); };
  return io_error(path + " is damaged: table checksum " + crc_of(now) + ", stored " + crc_of(stored));
}

Status image_table_write(const std::string& path, const ImageTable& table) {
  const int64_t rows = table.size();
  size_t width = 1;
  for (const std::string& s : table.symbols) width = std::max(width, s.size());
  std::vector<char> symbols(static_cast<size_t>(rows) * width, '\0');
  for (int64_t i = 0; i < rows; ++i) {
    const std::string& s = table.symbol_of(i);
    std::memcpy(symbols.data() + static_cast<size_t>(i) * width, s.data(), s.size());
  }
  {
    Handle fapl = plist_handle(file_access_plist());
    if (!fapl.valid()) return error("cannot create file access properties");
    Handle file = file_handle(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()));
    if (!file.valid()) return error(path + ": cannot open for writing");
    Handle text = type_handle(H5Tcopy(H5T_C_S1));
    if (!text.valid() || H5Tset_size(text.get(), width) < 0 || H5Tset_strpad(text.get(), H5T_STR_NULLPAD) < 0) {
      return error("cannot create the symbol type");
    }
    auto with_path = [&](const Status& s) { return s.is_ok() ? s : Status(s.code(), path + ": " + s.message()); };
    KILN_TRY(with_path(column_write(file.get(), kSymbol, text.get(), text.get(), symbols.data(), rows)));
    const std::vector<int32_t>* ints[] = {&table.start_date, &table.end_date};
    for (size_t c = 0; c < 2; ++c) {
      KILN_TRY(with_path(
          column_write(file.get(), kInt32Columns[c], H5T_STD_I32LE, H5T_NATIVE_INT32, ints[c]->data(), rows)));
    }
    const std::vector<double>* doubles[] = {&table.ret_5d, &table.ret_20d, &table.ret_60d, &table.market_cap};
    for (size_t c = 0; c < 4; ++c) {
      KILN_TRY(with_path(
          column_write(file.get(), kDoubleColumns[c], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, doubles[c]->data(), rows)));
    }
    KILN_TRY(with_path(checksum_attribute_write(file.get(), image_table_checksum(table))));
    KILN_TRY(file.close());
  }
  return file_fsync(path);
}

}  // namespace kiln::hdf5
