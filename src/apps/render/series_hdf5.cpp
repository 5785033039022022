// HDF5 input for series_load_hdf5(): a 1-D (N,) or 2-D (N,1)/(N,4) numeric dataset read as float32.
// HDF5's own error printing is switched off while we work; failures become kiln errors. The declared shape is checked
// against what the file stores and the memory there is before anything is allocated: a 1 KB file can declare 2^40
// values.
#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/host_memory.h"
#include "apps/render/series_hdf5.h"
#include "core/isolated_call.h"
#include "io/hdf5_handle.h"
#include "io/hdf5_zstd_register.h"
#include "kiln/apps/render.h"

namespace kiln {

namespace {

struct DatasetList {
  std::vector<std::string> names;
  size_t total = 0;
};

herr_t collect_dataset(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  if (info == nullptr || info->type != H5L_TYPE_HARD) return 0;
  const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
  if (object < 0) return 0;
  const bool is_dataset = H5Iget_type(object) == H5I_DATASET;
  H5Oclose(object);
  if (!is_dataset) return 0;
  auto* list = static_cast<DatasetList*>(data);
  constexpr size_t kMaxListed = 12;
  if (list->names.size() < kMaxListed) list->names.push_back(std::string("/") + name);
  ++list->total;
  return 0;
}

}  // namespace

std::string hdf5_dataset_listing(hid_t file) {
  DatasetList list;
  H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &list);
  H5Eclear2(H5E_DEFAULT);
  if (list.total == 0) return " (the file has no datasets)";
  std::string out = " (datasets: ";
  for (size_t i = 0; i < list.names.size(); ++i) {
    if (i > 0) out += ", ";
    out += list.names[i];
  }
  if (list.total > list.names.size()) out += ", ... (" + std::to_string(list.total) + " in all)";
  return out + ")";
}

namespace {

std::string shape_string(const std::vector<hsize_t>& dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(static_cast<unsigned long long>(dims[i]));
  }
  if (dims.size() == 1) out += ",";
  return out + ")";
}

}  // namespace

const char* hdf5_type_class_name(H5T_class_t cls) {
  switch (cls) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float";
    case H5T_TIME: return "time";
    case H5T_STRING: return "string";
    case H5T_BITFIELD: return "bitfield";
    case H5T_OPAQUE: return "opaque";
    case H5T_COMPOUND: return "compound";
    case H5T_REFERENCE: return "reference";
    case H5T_ENUM: return "enum";
    case H5T_VLEN: return "variable-length";
    case H5T_ARRAY: return "array";
    default: return "unknown";
  }
}

namespace {

// A filtered (compressed) dataset stores fewer bytes than it declares; price series compress a few times, never by
// more than this.
constexpr uint64_t kMaxCompressionRatio = 1000;

bool dataset_is_filtered(hid_t ds) {
  hdf5::Handle plist = hdf5::plist_handle(H5Dget_create_plist(ds));
  return plist.valid() && H5Pget_nfilters(plist.get()) > 0;
}

}  // namespace

Status hdf5_declared_size_check(hid_t ds, hid_t type, uint64_t values, const std::string& where, uint64_t file_size) {
  const uint64_t item = H5Tget_size(type);
  const uint64_t declared = values > UINT64_MAX / 8 ? UINT64_MAX : values * item;
  const bool filtered = dataset_is_filtered(ds);
  const uint64_t stored = H5Dget_storage_size(ds);
  const uint64_t ratio = filtered ? kMaxCompressionRatio : 1;
  const uint64_t present = std::min(stored, file_size);
  if (present == 0 || declared / ratio > present) {
    return io_error(where + ": declares " + std::to_string(values) + " values (" + std::to_string(declared) +
                    " bytes) but the file stores " + std::to_string(present) + " bytes of them" +
                    (filtered ? " (more than " + std::to_string(kMaxCompressionRatio) + "x compression)" : ""));
  }
  const uint64_t need = values > UINT64_MAX / 8 ? UINT64_MAX : values * sizeof(float);
  const uint64_t budget = host_memory_limit_bytes() / 2;
  if (need > budget) {
    return Status(Errc::kOutOfMemory, where + ": " + std::to_string(values) + " values need " + std::to_string(need >> 20) +
                         " MiB as float32, more than half the memory this process may use (" +
                         std::to_string(budget >> 19) + " MiB)");
  }
  return Status::ok();
}

namespace {

Result<Series> series_read_here(const std::string& path, const std::string& dataset, bool ohlc, bool volume) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return io_error(path + ": no such file");
  if (!std::filesystem::is_regular_file(path, ec)) return io_error(path + ": not a regular file");

  hdf5::ErrorScope quiet;
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return unsupported_format(path + ": not an HDF5 file");
  }
  KILN_TRY(hdf5_zstd_register());  // zstd-compressed inputs read without HDF5_PLUGIN_PATH
  hdf5::Handle file = hdf5::file_handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file.valid()) return hdf5::error(path + ": cannot open");

  if (dataset.empty()) {
    return invalid_argument(path + ": name the dataset, as " + path + ":/group/dataset" + hdf5_dataset_listing(file.get()));
  }
  const std::string where = path + ":" + dataset;
  hdf5::Handle object(H5Oopen(file.get(), dataset.c_str(), H5P_DEFAULT), H5Oclose);
  if (!object.valid()) {
    H5Eclear2(H5E_DEFAULT);
    return invalid_argument(path + ": no dataset '" + dataset + "'" + hdf5_dataset_listing(file.get()));
  }
  if (H5Iget_type(object.get()) != H5I_DATASET) {
    return invalid_argument(path + ": '" + dataset + "' is not a dataset" + hdf5_dataset_listing(file.get()));
  }
  const hid_t ds = object.get();

  hdf5::Handle type = hdf5::type_handle(H5Dget_type(ds));
  if (!type.valid()) return hdf5::error(where + ": cannot read the type");
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) {
    return unsupported_format(where + ": unsupported " + hdf5_type_class_name(cls) +
                              " dataset (expected integer or float numbers)");
  }

  hdf5::Handle space = hdf5::space_handle(H5Dget_space(ds));
  if (!space.valid()) return hdf5::error(where + ": cannot read the shape");
  const int ndims = H5Sget_simple_extent_ndims(space.get());
  if (ndims < 0) return hdf5::error(where + ": cannot read the shape");
  std::vector<hsize_t> dims(static_cast<size_t>(ndims));
  if (ndims > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0) {
    return hdf5::error(where + ": cannot read the shape");
  }
  const hsize_t extra = volume ? 1 : 0;
  const bool is_ohlc_shape = ndims == 2 && dims[1] == 4 + extra;
  if (ohlc && !is_ohlc_shape) {
    return invalid_argument(where + ": OHLC input needs shape (N, " + std::to_string(4 + extra) +
                            ") (Open, High, Low, Close" + (volume ? ", Volume" : "") + "), got " + shape_string(dims));
  }
  int32_t channels = 0;
  if (ndims == 1 && !volume) channels = 1;
  else if (ndims == 2 && (dims[1] == 1 + extra || dims[1] == 4 + extra)) channels = static_cast<int32_t>(dims[1]);
  if (channels == 0) {
    return unsupported_format(where + ": unsupported shape " + shape_string(dims) +
                              (volume ? " (expected (N, 2) or (N, 5): the prices, then the volume)"
                                      : " (expected (N,), (N, 1) or (N, 4))"));
  }
  if (dims[0] == 0) return io_error(where + ": empty dataset, no data rows");
  const uint64_t values = dims[0] > UINT64_MAX / 4 ? UINT64_MAX : dims[0] * static_cast<uint64_t>(channels);
  KILN_TRY(hdf5_declared_size_check(ds, type.get(), values, where, std::filesystem::file_size(path, ec)));

  Series series;
  series.rows = static_cast<int64_t>(dims[0]);
  series.channels = channels;
  series.source = where;
  series.column = channels - static_cast<int32_t>(extra) == 4 ? std::string("Open,High,Low,Close") : dataset;
  series.values.resize(static_cast<size_t>(dims[0]) * static_cast<size_t>(channels));
  if (H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, series.values.data()) < 0) {
    return hdf5::error(where + ": read failed");
  }
  return series;
}

// A Series as bytes for the trip from the reader's process: rows, channels, source and column lengths and text,
// then the values.
std::vector<uint8_t> series_bytes(const Series& s) {
  std::vector<uint8_t> out;
  const auto put = [&out](const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    out.insert(out.end(), p, p + size);
  };
  const int64_t header[4] = {s.rows, s.channels, static_cast<int64_t>(s.source.size()),
                             static_cast<int64_t>(s.column.size())};
  put(header, sizeof(header));
  put(s.source.data(), s.source.size());
  put(s.column.data(), s.column.size());
  put(s.values.data(), s.values.size() * sizeof(float));
  return out;
}

Result<Series> series_from_bytes(const std::vector<uint8_t>& bytes, const std::string& path) {
  int64_t header[4];
  if (bytes.size() < sizeof(header)) return io_error(path + ": the reader returned too little");
  std::memcpy(header, bytes.data(), sizeof(header));
  Series s;
  s.rows = header[0];
  s.channels = static_cast<int32_t>(header[1]);
  size_t at = sizeof(header);
  const auto text = static_cast<size_t>(header[2] + header[3]);
  const size_t values = bytes.size() - at - std::min(text, bytes.size() - at);
  if (header[2] < 0 || header[3] < 0 || at + text > bytes.size() || values % sizeof(float) != 0 ||
      static_cast<int64_t>(values / sizeof(float)) != s.rows * s.channels) {
    return io_error(path + ": the reader returned an inconsistent series");
  }
  s.source.assign(reinterpret_cast<const char*>(bytes.data() + at), static_cast<size_t>(header[2]));
  at += static_cast<size_t>(header[2]);
  s.column.assign(reinterpret_cast<const char*>(bytes.data() + at), static_cast<size_t>(header[3]));
  at += static_cast<size_t>(header[3]);
  s.values.resize(values / sizeof(float));
  std::memcpy(s.values.data(), bytes.data() + at, values);
  return s;
}

}  // namespace

// HDF5 1.10 crashes on some malformed files (found by fuzz/fuzz_series_hdf5): the file is read in a child process.
Result<Series> series_load_hdf5(const std::string& path, const std::string& dataset, bool ohlc, bool volume) {
  const auto read = [&]() -> Result<std::vector<uint8_t>> {
    KILN_TRY_ASSIGN(const Series s, series_read_here(path, dataset, ohlc, volume));
    return series_bytes(s);
  };
  KILN_TRY_ASSIGN(const std::vector<uint8_t> bytes, isolated_call(read, path));
  KILN_TRY_ASSIGN(Series series, series_from_bytes(bytes, path));
  series.layers = volume ? 1 : 0;
  return series;
}

}  // namespace kiln
