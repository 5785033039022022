// HDF5 input for series_load_hdf5(): a 1-D (N,) or 2-D (N,1)/(N,4) numeric dataset read as float32.
// HDF5's own error printing is switched off while we work; failures become kiln errors.
#include <hdf5.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/hdf5_zstd_register.h"
#include "kiln/apps/render.h"

namespace kiln {

namespace {

// Turns off HDF5's automatic error printing for the current scope.
class Hdf5Quiet {
 public:
  Hdf5Quiet() {
    H5Eget_auto2(H5E_DEFAULT, &m_func, &m_data);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~Hdf5Quiet() { H5Eset_auto2(H5E_DEFAULT, m_func, m_data); }
  Hdf5Quiet(const Hdf5Quiet&) = delete;
  Hdf5Quiet& operator=(const Hdf5Quiet&) = delete;

 private:
  H5E_auto2_t m_func = nullptr;
  void* m_data = nullptr;
};

// Owns one HDF5 identifier.
class Hdf5Id {
 public:
  using Closer = herr_t (*)(hid_t);
  Hdf5Id(hid_t id, Closer closer) : m_id(id), m_closer(closer) {}
  ~Hdf5Id() { reset(); }
  Hdf5Id(const Hdf5Id&) = delete;
  Hdf5Id& operator=(const Hdf5Id&) = delete;

  void reset() {
    if (m_id >= 0) m_closer(m_id);
    m_id = -1;
  }
  hid_t get() const { return m_id; }
  bool valid() const { return m_id >= 0; }

 private:
  hid_t m_id;
  Closer m_closer;
};

// The most specific message on HDF5's error stack, e.g. "required filter 'zstd' is not registered".
std::string hdf5_last_error() {
  std::string message;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* err, void* data) -> herr_t {
        if (n == 0 && err != nullptr && err->desc != nullptr) *static_cast<std::string*>(data) = err->desc;
        return 0;
      },
      &message);
  H5Eclear2(H5E_DEFAULT);
  return message.empty() ? std::string("unknown HDF5 error") : message;
}

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

// " (datasets: /a, /b)" or " (the file has no datasets)".
std::string dataset_listing(hid_t file) {
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

std::string shape_string(const std::vector<hsize_t>& dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(static_cast<unsigned long long>(dims[i]));
  }
  if (dims.size() == 1) out += ",";
  return out + ")";
}

const char* type_class_name(H5T_class_t cls) {
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

}  // namespace

Result<Series> series_load_hdf5(const std::string& path, const std::string& dataset, bool ohlc) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return io_error(path + ": no such file");
  if (!std::filesystem::is_regular_file(path, ec)) return io_error(path + ": not a regular file");

  Hdf5Quiet quiet;
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return unsupported_format(path + ": not an HDF5 file");
  }
  KILN_TRY(hdf5_zstd_register());  // zstd-compressed inputs read without HDF5_PLUGIN_PATH
  Hdf5Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) return io_error(path + ": cannot open: " + hdf5_last_error());

  if (dataset.empty()) {
    return invalid_argument(path + ": name the dataset, as " + path + ":/group/dataset" + dataset_listing(file.get()));
  }
  const std::string where = path + ":" + dataset;
  Hdf5Id object(H5Oopen(file.get(), dataset.c_str(), H5P_DEFAULT), H5Oclose);
  if (!object.valid()) {
    H5Eclear2(H5E_DEFAULT);
    return invalid_argument(path + ": no dataset '" + dataset + "'" + dataset_listing(file.get()));
  }
  if (H5Iget_type(object.get()) != H5I_DATASET) {
    return invalid_argument(path + ": '" + dataset + "' is not a dataset" + dataset_listing(file.get()));
  }
  const hid_t ds = object.get();

  Hdf5Id type(H5Dget_type(ds), H5Tclose);
  if (!type.valid()) return io_error(where + ": cannot read the type: " + hdf5_last_error());
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) {
    return unsupported_format(where + ": unsupported " + type_class_name(cls) +
                              " dataset (expected integer or float numbers)");
  }

  Hdf5Id space(H5Dget_space(ds), H5Sclose);
  if (!space.valid()) return io_error(where + ": cannot read the shape: " + hdf5_last_error());
  const int ndims = H5Sget_simple_extent_ndims(space.get());
  if (ndims < 0) return io_error(where + ": cannot read the shape: " + hdf5_last_error());
  std::vector<hsize_t> dims(static_cast<size_t>(ndims));
  if (ndims > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0) {
    return io_error(where + ": cannot read the shape: " + hdf5_last_error());
  }
  const bool is_ohlc_shape = ndims == 2 && dims[1] == 4;
  if (ohlc && !is_ohlc_shape) {
    return invalid_argument(where + ": OHLC input needs shape (N, 4) (Open, High, Low, Close), got " +
                            shape_string(dims));
  }
  int32_t channels = 0;
  if (ndims == 1) channels = 1;
  else if (ndims == 2 && (dims[1] == 1 || dims[1] == 4)) channels = static_cast<int32_t>(dims[1]);
  if (channels == 0) {
    return unsupported_format(where + ": unsupported shape " + shape_string(dims) +
                              " (expected (N,), (N, 1) or (N, 4))");
  }
  if (dims[0] == 0) return io_error(where + ": empty dataset, no data rows");

  Series series;
  series.rows = static_cast<int64_t>(dims[0]);
  series.channels = channels;
  series.source = where;
  series.column = channels == 4 ? std::string("Open,High,Low,Close") : dataset;
  series.values.resize(static_cast<size_t>(dims[0]) * static_cast<size_t>(channels));
  if (H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, series.values.data()) < 0) {
    return io_error(where + ": read failed: " + hdf5_last_error());
  }
  return series;
}

}  // namespace kiln
