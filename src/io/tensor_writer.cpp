#include "io/tensor_writer.h"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/durable_file.h"
#include "io/hdf5_handle.h"
#include "io/npy_format.h"
#include "io/zip_store.h"
#include "kiln/codec.h"

namespace kiln {

namespace {

namespace fs = std::filesystem;

// The NPY header is reserved at this size and rewritten in place with the final
// N (v1.0 allows 65535).
constexpr size_t kNpyHeaderBytes = 256;

size_t values_size(ArrayValues values, PixelType dtype) {
  switch (values) {
    case ArrayValues::kU8: return 1;
    case ArrayValues::kI32: return 4;
    case ArrayValues::kI64: return 8;
    case ArrayValues::kFloat: break;
  }
  return pixel_type_size(dtype);
}

std::string values_npy_descr(ArrayValues values, PixelType dtype) {
  switch (values) {
    case ArrayValues::kU8: return "|u1";
    case ArrayValues::kI32: return "<i4";
    case ArrayValues::kI64: return "<i8";
    case ArrayValues::kFloat: break;
  }
  return npy_descr(dtype);
}

hid_t values_h5_file_type(ArrayValues values) {
  return values == ArrayValues::kU8 ? H5T_STD_U8LE : values == ArrayValues::kI32 ? H5T_STD_I32LE : H5T_STD_I64LE;
}

hid_t values_h5_memory_type(ArrayValues values) {
  return values == ArrayValues::kU8    ? H5T_NATIVE_UINT8
         : values == ArrayValues::kI32 ? H5T_NATIVE_INT32
                                       : H5T_NATIVE_INT64;
}

std::string npy_names_path(const std::string& path) {
  fs::path p(path);
  p.replace_extension(".paths.txt");
  return p.string();
}

}  // namespace

// A unique temporary name means nothing to the user: errors name the file asked for.
Status TensorWriter::named(Status status) const {
  if (status.is_ok()) return status;
  std::string message = status.message();
  const auto replace = [&](const std::string& tmp) {
    for (size_t at; !tmp.empty() && (at = message.find(tmp)) != std::string::npos;) message.replace(at, tmp.size(), m_path);
  };
  replace(m_tmp_path);
  for (const Array& a : m_arrays) replace(a.tmp_path);
  return Status(status.code(), message);
}

Result<TensorFileFormat> tensor_file_format_from_path(const std::string& path) {
  const std::string ext = path_extension(path);
  if (ext == ".npy") return TensorFileFormat::kNpy;
  if (ext == ".npz") return TensorFileFormat::kNpz;
  if (ext == ".h5" || ext == ".hdf5") return TensorFileFormat::kHdf5;
  return invalid_argument(path + ": output must end in .npy, .npz, .h5 or .hdf5");
}

TensorWriter::~TensorWriter() { abandon(); }

void TensorWriter::abandon() {
  for (Array& a : m_arrays) {
    if (a.fd >= 0 && a.fd != m_fd) ::close(a.fd);
    if (!a.tmp_path.empty()) ::unlink(a.tmp_path.c_str());
    if (a.dataset >= 0) H5Dclose(a.dataset);
  }
  m_arrays.clear();
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
  if (m_file >= 0) H5Fclose(m_file);
  if (m_h5_type >= 0) H5Tclose(m_h5_type);
  m_file = m_h5_type = -1;
  if (!m_tmp_path.empty()) ::unlink(m_tmp_path.c_str());
  m_tmp_path.clear();
  m_open = false;
  m_count = 0;
}

Status TensorWriter::open(const std::string& path, const std::vector<int64_t>& item_shape, PixelType dtype) {
  return open_arrays(path, {{"images", item_shape}}, dtype);
}

Status TensorWriter::open_arrays(const std::string& path, const std::vector<TensorArraySpec>& arrays, PixelType dtype) {
  abandon();
  KILN_TRY_ASSIGN(m_format, tensor_file_format_from_path(path));
  if (dtype != PixelType::kF32 && dtype != PixelType::kF16)
    return invalid_argument("tensor writer: dtype must be float32 or float16");
  if (arrays.empty()) return invalid_argument("tensor writer: no arrays");
  if (m_format == TensorFileFormat::kNpy && arrays.size() != 1)
    return invalid_argument(path + ": a .npy file holds one array; use .npz or .h5 for " +
                            std::to_string(arrays.size()));
  for (const TensorArraySpec& spec : arrays) {
    if (spec.name.empty() || spec.name == "paths")
      return invalid_argument("tensor writer: bad array name '" + spec.name + "'");
    // An empty item shape is one number per item: an (N,) array.
    if (spec.item_shape.size() > 7) return invalid_argument("tensor writer: at most 7 item dimensions");
    size_t elems = 1;
    for (int64_t d : spec.item_shape) {
      if (d <= 0) return invalid_argument("tensor writer: item dimensions must be positive");
      elems *= static_cast<size_t>(d);
    }
    Array array;
    array.spec = spec;
    array.item_bytes = elems * values_size(spec.values, dtype);
    m_arrays.push_back(std::move(array));
  }
  m_path = path;
  m_dtype = dtype;
  m_count = 0;
  Status s = [&]() -> Status {
    KILN_TRY_ASSIGN(m_tmp_path, temp_file_create(path));
    if (m_format == TensorFileFormat::kHdf5) return h5_open();
    m_fd = ::open(m_tmp_path.c_str(), O_RDWR | O_TRUNC | O_CLOEXEC);
    if (m_fd < 0) return errno_status(m_tmp_path + ": cannot open");
    for (Array& a : m_arrays) {
      if (m_format == TensorFileFormat::kNpy) {
        a.fd = m_fd;
      } else {
        KILN_TRY_ASSIGN(a.tmp_path, temp_file_create(path));
        a.fd = ::open(a.tmp_path.c_str(), O_RDWR | O_TRUNC | O_CLOEXEC);
        if (a.fd < 0) return errno_status(a.tmp_path + ": cannot open");
      }
      KILN_TRY(npy_header_write(a, false));
    }
    return Status::ok();
  }();
  if (!s.is_ok()) {
    s = named(s);
    abandon();
    return s;
  }
  m_open = true;
  return Status::ok();
}

Status TensorWriter::append(const void* items, int64_t count) {
  if (m_arrays.size() > 1)
    return invalid_argument("tensor writer: " + std::to_string(m_arrays.size()) + " arrays to append to");
  return append(std::vector<const void*>{items}, count);
}

Status TensorWriter::append(const std::vector<const void*>& items, int64_t count) {
  if (!m_open) return invalid_argument("tensor writer: not open");
  if (items.size() != m_arrays.size()) return invalid_argument("tensor writer: one pointer per array");
  if (count < 0) return invalid_argument("tensor writer: bad items");
  if (count == 0) return Status::ok();
  for (size_t a = 0; a < m_arrays.size(); ++a) {
    if (items[a] == nullptr) return invalid_argument("tensor writer: bad items");
    Status s = m_format == TensorFileFormat::kHdf5 ? h5_append(m_arrays[a], items[a], count)
                                                   : npy_append(m_arrays[a], items[a], count);
    if (!s.is_ok()) return named(s);
  }
  m_count += count;
  return Status::ok();
}

Status TensorWriter::finish(const std::vector<std::string>& names, const TensorAttributes& attributes) {
  if (!m_open) return invalid_argument("tensor writer: not open");
  if (!names.empty() && static_cast<int64_t>(names.size()) != m_count)
    return invalid_argument("tensor writer: " + std::to_string(names.size()) + " names for " + std::to_string(m_count) +
                            " items");
  Status s;
  if (m_format == TensorFileFormat::kNpy) {
    s = npy_header_write(m_arrays[0], true);
    const int fd = m_fd;
    m_fd = m_arrays[0].fd = -1;  // closed below even when close() reports an error: never closed twice
    if (::close(fd) != 0 && s.is_ok()) s = errno_status(m_tmp_path + ": close");
    if (s.is_ok()) {
      std::string text;
      for (const std::string& name : names) text += name + "\n";
      s = file_write_atomic(npy_names_path(m_path), text);
    }
  } else if (m_format == TensorFileFormat::kNpz) {
    s = npz_finish(names);
  } else {
    s = h5_finish(names, attributes);
  }
  if (s.is_ok()) s = file_commit(m_tmp_path, m_path);
  if (!s.is_ok()) {
    s = named(s);
    abandon();
    return s;
  }
  m_tmp_path.clear();
  abandon();
  return Status::ok();
}

// ---- npy, npz
// -----------------------------------------------------------------------------------------------

Status TensorWriter::npy_header_write(Array& array, bool final_header) {
  std::vector<int64_t> shape{final_header ? m_count : 0};
  shape.insert(shape.end(), array.spec.item_shape.begin(), array.spec.item_shape.end());
  const std::string header = npy_header(values_npy_descr(array.spec.values, m_dtype), shape, kNpyHeaderBytes);
  if (header.empty()) return invalid_argument("tensor writer: npy header too long");
  return fd_pwrite_all(array.fd, header.data(), header.size(), 0, m_tmp_path);
}

Status TensorWriter::npy_append(Array& array, const void* items, int64_t count) {
  const int64_t offset = static_cast<int64_t>(kNpyHeaderBytes) + m_count * static_cast<int64_t>(array.item_bytes);
  return fd_pwrite_all(array.fd, items, static_cast<size_t>(count) * array.item_bytes, offset, m_tmp_path);
}

namespace {

// The names as a numpy unicode array ('<U<longest>', UTF-32): what
// np.load(...)["paths"] returns.
std::string npy_strings(const std::vector<std::string>& names) {
  std::vector<std::u32string> wide;
  size_t longest = 1;
  for (const std::string& name : names) {
    std::u32string w;
    for (size_t i = 0; i < name.size();) {
      const auto c = static_cast<unsigned char>(name[i]);
      const int extra = c < 0x80 ? 0 : c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3;
      char32_t cp = extra == 0 ? c : c & (0x3F >> extra);
      for (int k = 1; k <= extra && i + k < name.size(); ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(name[i + k]) & 0x3F);
      w += cp;
      i += 1 + extra;
    }
    longest = std::max(longest, w.size());
    wide.push_back(std::move(w));
  }
  std::string out = npy_header("<U" + std::to_string(longest), {static_cast<int64_t>(names.size())});
  for (const std::u32string& w : wide) {
    for (size_t i = 0; i < longest; ++i) {
      const char32_t cp = i < w.size() ? w[i] : 0;
      for (int b = 0; b < 4; ++b) out += static_cast<char>((cp >> (8 * b)) & 0xFF);
    }
  }
  return out;
}

}  // namespace

Status TensorWriter::npz_finish(const std::vector<std::string>& names) {
  std::vector<ZipMember> members;
  for (Array& a : m_arrays) {
    KILN_TRY(npy_header_write(a, true));
    const int fd = a.fd;
    a.fd = -1;
    if (::close(fd) != 0) return errno_status(a.tmp_path + ": close");
    members.push_back({a.spec.name + ".npy", a.tmp_path});
  }
  KILN_TRY_ASSIGN(const std::string paths_tmp, temp_file_create(m_path));
  Array paths;
  paths.spec.name = "paths";
  paths.tmp_path = paths_tmp;  // removed with the other temporaries
  m_arrays.push_back(std::move(paths));
  {
    const int fd = ::open(paths_tmp.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return errno_status(paths_tmp + ": cannot open");
    FdCloser closer(fd);
    const std::string bytes = npy_strings(names);
    KILN_TRY(fd_write_all(fd, bytes.data(), bytes.size(), paths_tmp));
  }
  members.push_back({"paths.npy", paths_tmp});
  KILN_TRY(zip_store_write(m_fd, members, m_tmp_path));
  if (::fsync(m_fd) != 0) return errno_status(m_tmp_path + ": fsync failed");
  const int fd = m_fd;
  m_fd = -1;
  if (::close(fd) != 0) return errno_status(m_tmp_path + ": close");
  return Status::ok();
}

// ---- hdf5
// ---------------------------------------------------------------------------------------------------

Status TensorWriter::h5_open() {
  hdf5::ErrorScope quiet;
  if (m_dtype == PixelType::kF16) {
    // IEEE binary16, the layout h5py and numpy read as float16.
    m_h5_type = H5Tcopy(H5T_IEEE_F32LE);
    if (m_h5_type < 0 || H5Tset_fields(m_h5_type, 15, 10, 5, 0, 10) < 0 || H5Tset_size(m_h5_type, 2) < 0 ||
        H5Tset_ebias(m_h5_type, 15) < 0)
      return hdf5::error("cannot create the float16 type");
  }
  // No object stores the times it was made (HDF5 tracks them by default): the same run writes the same bytes.
  hdf5::Handle fcpl = hdf5::plist_handle(H5Pcreate(H5P_FILE_CREATE));
  if (!fcpl.valid() || H5Pset_obj_track_times(fcpl.get(), 0) < 0) return hdf5::error("cannot set up file creation");
  m_file = H5Fcreate(m_tmp_path.c_str(), H5F_ACC_TRUNC, fcpl.get(), H5P_DEFAULT);
  if (m_file < 0) return hdf5::error(m_tmp_path + ": cannot create");
  for (Array& array : m_arrays) {
    std::vector<hsize_t> dims{0}, max_dims{H5S_UNLIMITED}, chunk{1};
    for (int64_t d : array.spec.item_shape) {
      dims.push_back(static_cast<hsize_t>(d));
      max_dims.push_back(static_cast<hsize_t>(d));
      chunk.push_back(static_cast<hsize_t>(d));
    }
    hdf5::Handle space =
        hdf5::space_handle(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), max_dims.data()));
    hdf5::Handle dcpl = hdf5::plist_handle(H5Pcreate(H5P_DATASET_CREATE));
    if (!space.valid() || !dcpl.valid() || H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()) < 0 ||
        H5Pset_obj_track_times(dcpl.get(), 0) < 0)
      return hdf5::error(m_tmp_path + ": cannot set up the " + array.spec.name + " dataset");
    const hid_t type = array.spec.values != ArrayValues::kFloat ? values_h5_file_type(array.spec.values)
                       : m_dtype == PixelType::kF16                ? m_h5_type
                                                                   : H5T_IEEE_F32LE;
    // Model outputs are often named like paths ("/model/Sigmoid_output_0"): the groups on the way are created here,
    // without times (HDF5's own intermediate groups would track them).
    KILN_TRY(groups_create(array.spec.name));
    array.dataset =
        H5Dcreate2(m_file, array.spec.name.c_str(), type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT);
    if (array.dataset < 0) return hdf5::error(m_tmp_path + ": cannot create the " + array.spec.name + " dataset");
  }
  return Status::ok();
}

Status TensorWriter::groups_create(const std::string& dataset_name) {
  hdf5::Handle gcpl = hdf5::plist_handle(H5Pcreate(H5P_GROUP_CREATE));
  if (!gcpl.valid() || H5Pset_obj_track_times(gcpl.get(), 0) < 0) return hdf5::error("cannot set up groups");
  for (size_t slash = dataset_name.find('/', 1); slash != std::string::npos;
       slash = dataset_name.find('/', slash + 1)) {
    const std::string group = dataset_name.substr(0, slash);
    if (H5Lexists(m_file, group.c_str(), H5P_DEFAULT) > 0) continue;
    hdf5::Handle g = hdf5::group_handle(H5Gcreate2(m_file, group.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT));
    if (!g.valid()) return hdf5::error(m_tmp_path + ": cannot create the group " + group);
  }
  return Status::ok();
}

Status TensorWriter::h5_append(Array& array, const void* items, int64_t count) {
  hdf5::ErrorScope quiet;
  std::vector<hsize_t> dims{static_cast<hsize_t>(m_count + count)};
  std::vector<hsize_t> start{static_cast<hsize_t>(m_count)}, block{static_cast<hsize_t>(count)};
  for (int64_t d : array.spec.item_shape) {
    dims.push_back(static_cast<hsize_t>(d));
    start.push_back(0);
    block.push_back(static_cast<hsize_t>(d));
  }
  if (H5Dset_extent(array.dataset, dims.data()) < 0)
    return hdf5::error(m_tmp_path + ": cannot extend " + array.spec.name);
  hdf5::Handle file_space = hdf5::space_handle(H5Dget_space(array.dataset));
  hdf5::Handle mem_space = hdf5::space_handle(H5Screate_simple(static_cast<int>(block.size()), block.data(), nullptr));
  if (!file_space.valid() || !mem_space.valid() ||
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, block.data(), nullptr) < 0)
    return hdf5::error(m_tmp_path + ": cannot select rows");
  const hid_t mem_type = array.spec.values != ArrayValues::kFloat ? values_h5_memory_type(array.spec.values)
                         : m_dtype == PixelType::kF16                ? m_h5_type
                                                                     : H5T_NATIVE_FLOAT;
  if (H5Dwrite(array.dataset, mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, items) < 0)
    return hdf5::error(m_tmp_path + ": cannot write " + array.spec.name);
  return Status::ok();
}

Status TensorWriter::h5_finish(const std::vector<std::string>& names, const TensorAttributes& attributes) {
  hdf5::ErrorScope quiet;
  hdf5::Handle str_type = hdf5::type_handle(H5Tcopy(H5T_C_S1));
  if (!str_type.valid() || H5Tset_size(str_type.get(), H5T_VARIABLE) < 0 ||
      H5Tset_cset(str_type.get(), H5T_CSET_UTF8) < 0)
    return hdf5::error("cannot create the string type");
  {
    std::vector<const char*> ptrs;
    ptrs.reserve(names.size());
    for (const std::string& n : names) ptrs.push_back(n.c_str());
    const hsize_t n = static_cast<hsize_t>(names.size());
    hdf5::Handle space = hdf5::space_handle(H5Screate_simple(1, &n, nullptr));
    hdf5::Handle dcpl = hdf5::plist_handle(H5Pcreate(H5P_DATASET_CREATE));
    if (!dcpl.valid() || H5Pset_obj_track_times(dcpl.get(), 0) < 0) return hdf5::error("cannot set up paths");
    hdf5::Handle ds = hdf5::dataset_handle(
        H5Dcreate2(m_file, "paths", str_type.get(), space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
    if (!ds.valid()) return hdf5::error(m_tmp_path + ": cannot create paths");
    if (n > 0 && H5Dwrite(ds.get(), str_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0)
      return hdf5::error(m_tmp_path + ": cannot write paths");
  }
  hdf5::Handle scalar = hdf5::space_handle(H5Screate(H5S_SCALAR));
  for (const auto& [name, value] : attributes.text) {
    hdf5::Handle attr = hdf5::attribute_handle(
        H5Acreate2(m_file, name.c_str(), str_type.get(), scalar.get(), H5P_DEFAULT, H5P_DEFAULT));
    const char* ptr = value.c_str();
    if (!attr.valid() || H5Awrite(attr.get(), str_type.get(), &ptr) < 0)
      return hdf5::error(m_tmp_path + ": cannot write attribute " + name);
  }
  for (const auto& [name, values] : attributes.numbers) {
    const hsize_t n = static_cast<hsize_t>(values.size());
    hdf5::Handle space = hdf5::space_handle(n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr));
    hdf5::Handle attr =
        hdf5::attribute_handle(H5Acreate2(m_file, name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT));
    if (!attr.valid() || (n > 0 && H5Awrite(attr.get(), H5T_NATIVE_DOUBLE, values.data()) < 0))
      return hdf5::error(m_tmp_path + ": cannot write attribute " + name);
  }
  herr_t rc = 0;
  for (Array& array : m_arrays) {
    if (H5Dclose(array.dataset) < 0) rc = -1;
    array.dataset = -1;
  }
  const herr_t rc_file = H5Fclose(m_file);
  m_file = -1;
  if (rc < 0 || rc_file < 0) return hdf5::error(m_tmp_path + ": cannot close");
  return Status::ok();
}

}  // namespace kiln
