#include "io/hdf5_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>

#include "io/hdf5_zstd_register.h"

namespace kiln::hdf5 {

namespace fs = std::filesystem;

// ---- handles and errors ----------------------------------------------------------------------------------

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    reset();
    m_id = other.m_id;
    m_close = other.m_close;
    other.m_id = H5I_INVALID_HID;
  }
  return *this;
}

void Handle::reset() {
  if (m_id >= 0 && m_close != nullptr) {
    ErrorScope quiet;
    if (m_close(m_id) < 0) H5Eclear2(H5E_DEFAULT);
  }
  m_id = H5I_INVALID_HID;
}

Status Handle::close() {
  if (m_id < 0) return Status::ok();
  const hid_t id = m_id;
  m_id = H5I_INVALID_HID;
  if (m_close != nullptr && m_close(id) < 0) return error("cannot close HDF5 object");
  return Status::ok();
}

ErrorScope::ErrorScope() {
  H5Eget_auto2(H5E_DEFAULT, &m_func, &m_data);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

ErrorScope::~ErrorScope() { H5Eset_auto2(H5E_DEFAULT, m_func, m_data); }

namespace {

struct ErrorWalk {
  std::vector<std::string> lines;
};

herr_t error_walk_cb(unsigned /*n*/, const H5E_error2_t* err, void* data) {
  auto* walk = static_cast<ErrorWalk*>(data);
  std::string line;
  char minor[256] = {0};
  if (H5Eget_msg(err->min_num, nullptr, minor, sizeof(minor)) < 0) minor[0] = '\0';
  if (err->desc != nullptr && err->desc[0] != '\0') line = err->desc;
  if (minor[0] != '\0') line += std::string(line.empty() ? "" : " (") + minor + (line.empty() ? "" : ")");
  if (!line.empty()) walk->lines.push_back(std::move(line));
  return 0;
}

}  // namespace

Status error(const std::string& what) {
  ErrorWalk walk;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, error_walk_cb, &walk);
  H5Eclear2(H5E_DEFAULT);
  std::string message = what;
  if (!walk.lines.empty()) {
    // Outermost (API level) and innermost (the actual cause) are the informative ends of the stack.
    message += ": " + walk.lines.front();
    if (walk.lines.size() > 1) message += ": " + walk.lines.back();
  }
  return io_error(message);
}

// ---- naming ---------------------------------------------------------------------------------------------

namespace {

struct PathParts {
  fs::path dir;
  std::string stem;
  std::string ext;
};

PathParts path_split(const std::string& out) {
  const fs::path p(out);
  PathParts parts;
  parts.dir = p.parent_path();
  parts.stem = p.stem().string();
  parts.ext = p.extension().string();
  if (parts.ext.empty()) parts.ext = ".h5";
  return parts;
}

std::string index_format(const char* fmt, int64_t index) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), fmt, static_cast<long long>(index));
  return buf;
}

}  // namespace

std::string parts_dir(const std::string& out) { return out + ".parts"; }

std::string part_path(const std::string& out, int64_t index) {
  return (fs::path(parts_dir(out)) / ("part_" + index_format("%05lld", index) + ".h5")).string();
}

std::string shard_path(const std::string& out, int64_t index) {
  const PathParts parts = path_split(out);
  return (parts.dir / (parts.stem + "_batch_" + index_format("%04lld", index) + parts.ext)).string();
}

std::string manifest_path(const std::string& out) {
  const PathParts parts = path_split(out);
  return (parts.dir / (parts.stem + ".manifest.json")).string();
}

std::vector<std::pair<int64_t, std::string>> shards_list(const std::string& out) {
  const PathParts parts = path_split(out);
  const std::string prefix = parts.stem + "_batch_";
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  const fs::path dir = parts.dir.empty() ? fs::path(".") : parts.dir;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() + parts.ext.size()) continue;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    if (name.compare(name.size() - parts.ext.size(), parts.ext.size(), parts.ext) != 0) continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - parts.ext.size());
    if (digits.empty() || digits.size() > 12 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    const int64_t index = std::stoll(digits);
    if (shard_path(out, index) != (parts.dir / name).string()) continue;  // e.g. 0-padding differs
    found.emplace_back(index, (parts.dir / name).string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

// ---- durability -----------------------------------------------------------------------------------------

namespace {

Status fd_fsync(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return io_error(path + ": cannot open for fsync: " + std::strerror(errno));
  int rc = 0;
  do {
    rc = ::fsync(fd);
  } while (rc != 0 && errno == EINTR);
  const int err = errno;
  ::close(fd);
  // Some filesystems refuse fsync on directories (EINVAL); that is not a durability failure we can fix.
  if (rc != 0 && !(err == EINVAL && (flags & O_DIRECTORY) != 0)) {
    return io_error(path + ": fsync failed: " + std::strerror(err));
  }
  return Status::ok();
}

}  // namespace

Status file_fsync(const std::string& path) { return fd_fsync(path, O_RDONLY); }

Status dir_fsync(const std::string& dir) { return fd_fsync(dir.empty() ? "." : dir, O_RDONLY | O_DIRECTORY); }

Status file_commit(const std::string& tmp, const std::string& final_path) {
  KILN_TRY(file_fsync(tmp));
  std::error_code ec;
  fs::rename(tmp, final_path, ec);
  if (ec) return io_error("cannot rename " + tmp + " to " + final_path + ": " + ec.message());
  return dir_fsync(fs::path(final_path).parent_path().string());
}

// ---- attributes -----------------------------------------------------------------------------------------

namespace {

Result<Handle> attribute_create(hid_t loc, const char* name, hid_t type, hid_t space) {
  const htri_t exists = H5Aexists(loc, name);
  if (exists < 0) return error(std::string("cannot check attribute ") + name);
  if (exists > 0 && H5Adelete(loc, name) < 0) return error(std::string("cannot replace attribute ") + name);
  const hid_t id = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  if (id < 0) return error(std::string("cannot create attribute ") + name);
  return attribute_handle(id);
}

Status attribute_write_raw(hid_t loc, const char* name, hid_t file_type, hid_t mem_type, const void* data,
                           hsize_t n) {
  Handle space = space_handle(n == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr));
  if (!space.valid()) return error("cannot create dataspace");
  KILN_TRY_ASSIGN(Handle attr, attribute_create(loc, name, file_type, space.get()));
  if (H5Awrite(attr.get(), mem_type, data) < 0) return error(std::string("cannot write attribute ") + name);
  return attr.close();
}

Status attribute_i64(hid_t loc, const char* name, int64_t value) {
  return attribute_write_raw(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, 0);
}

Status attribute_f64(hid_t loc, const char* name, double value) {
  return attribute_write_raw(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, 0);
}

Status attribute_i8(hid_t loc, const char* name, int8_t value) {
  return attribute_write_raw(loc, name, H5T_STD_I8LE, H5T_NATIVE_INT8, &value, 0);
}

Result<Handle> string_type() {
  Handle type = type_handle(H5Tcopy(H5T_C_S1));
  if (!type.valid() || H5Tset_size(type.get(), H5T_VARIABLE) < 0 ||
      H5Tset_cset(type.get(), H5T_CSET_UTF8) < 0) {
    return error("cannot create string type");
  }
  return type;
}

Status attribute_str(hid_t loc, const char* name, const std::string& value) {
  KILN_TRY_ASSIGN(Handle type, string_type());
  const char* ptr = value.c_str();
  return attribute_write_raw(loc, name, type.get(), type.get(), &ptr, 0);
}

Result<Handle> attribute_open(hid_t loc, const char* name) {
  const htri_t exists = H5Aexists(loc, name);
  if (exists < 0) return error(std::string("cannot check attribute ") + name);
  if (exists == 0) return io_error(std::string("missing attribute '") + name + "' (not a kiln HDF5 file?)");
  const hid_t id = H5Aopen(loc, name, H5P_DEFAULT);
  if (id < 0) return error(std::string("cannot open attribute ") + name);
  return attribute_handle(id);
}

Result<hssize_t> attribute_elements(hid_t attr) {
  Handle space = space_handle(H5Aget_space(attr));
  if (!space.valid()) return error("cannot read attribute dataspace");
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) return error("cannot read attribute size");
  return n;
}

Result<int64_t> attribute_read_i64(hid_t loc, const char* name) {
  KILN_TRY_ASSIGN(Handle attr, attribute_open(loc, name));
  KILN_TRY_ASSIGN(hssize_t n, attribute_elements(attr.get()));
  if (n != 1) return io_error(std::string("attribute ") + name + " is not a scalar");
  int64_t value = 0;
  if (H5Aread(attr.get(), H5T_NATIVE_INT64, &value) < 0) return error(std::string("cannot read attribute ") + name);
  return value;
}

Result<double> attribute_read_f64(hid_t loc, const char* name) {
  KILN_TRY_ASSIGN(Handle attr, attribute_open(loc, name));
  KILN_TRY_ASSIGN(hssize_t n, attribute_elements(attr.get()));
  if (n != 1) return io_error(std::string("attribute ") + name + " is not a scalar");
  double value = 0;
  if (H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value) < 0) return error(std::string("cannot read attribute ") + name);
  return value;
}

Result<std::vector<int64_t>> attribute_read_i64_array(hid_t loc, const char* name) {
  KILN_TRY_ASSIGN(Handle attr, attribute_open(loc, name));
  KILN_TRY_ASSIGN(hssize_t n, attribute_elements(attr.get()));
  std::vector<int64_t> values(static_cast<size_t>(n));
  if (n > 0 && H5Aread(attr.get(), H5T_NATIVE_INT64, values.data()) < 0) {
    return error(std::string("cannot read attribute ") + name);
  }
  return values;
}

}  // namespace

Result<std::string> attribute_read_string(hid_t attr, const char* name) {
  Handle type = type_handle(H5Aget_type(attr));
  if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING) {
    return io_error(std::string("attribute ") + name + " is not a string");
  }
  const htri_t is_var = H5Tis_variable_str(type.get());
  if (is_var < 0) return error(std::string("cannot inspect attribute ") + name);
  if (is_var > 0) {
    KILN_TRY_ASSIGN(Handle mem, string_type());
    char* ptr = nullptr;
    if (H5Aread(attr, mem.get(), &ptr) < 0) return error(std::string("cannot read attribute ") + name);
    std::string value = ptr != nullptr ? std::string(ptr) : std::string();
    H5free_memory(ptr);
    return value;
  }
  const size_t size = H5Tget_size(type.get());
  std::string value(size, '\0');
  Handle mem = type_handle(H5Tcopy(H5T_C_S1));
  if (!mem.valid() || H5Tset_size(mem.get(), size) < 0 || H5Aread(attr, mem.get(), value.data()) < 0) {
    return error(std::string("cannot read attribute ") + name);
  }
  const size_t end = value.find('\0');
  if (end != std::string::npos) value.resize(end);
  return value;
}

namespace {

Result<std::string> attribute_read_str(hid_t loc, const char* name) {
  KILN_TRY_ASSIGN(Handle attr, attribute_open(loc, name));
  return attribute_read_string(attr.get(), name);
}

}  // namespace

std::string compression_label(Compression compression, int32_t level) {
  if (compression == Compression::kNone) return "none";
  return std::string(compression == Compression::kZstd ? "zstd" : "gzip") + "-" + std::to_string(level);
}

Status attributes_write(hid_t loc, const FileAttributes& a) {
  const DatasetAttributes& d = a.dataset;
  KILN_TRY(attribute_i64(loc, "seq_len", d.seq_len));
  KILN_TRY(attribute_i64(loc, "stride", d.stride));
  KILN_TRY(attribute_f64(loc, "line_width", d.line_width));
  KILN_TRY(attribute_str(loc, "style", d.style));
  const int64_t resolution[3] = {d.width, d.height, d.dpi};
  KILN_TRY(attribute_write_raw(loc, "resolution", H5T_STD_I64LE, H5T_NATIVE_INT64, resolution, 3));
  KILN_TRY(attribute_str(loc, "source", d.source));
  KILN_TRY(attribute_str(loc, "column", d.column));
  KILN_TRY(attribute_i64(loc, "skipped_windows", d.skipped_windows));
  KILN_TRY(attribute_i64(loc, "dropped_no_future", d.dropped_no_future));
  KILN_TRY(attribute_i64(loc, "label_horizon", d.label_horizon));
  KILN_TRY(attribute_f64(loc, "label_threshold", d.label_threshold));
  KILN_TRY(attribute_str(loc, "kiln_version", d.kiln_version));
  KILN_TRY(attribute_str(loc, "config", d.config_json));
  KILN_TRY(attribute_str(loc, "created_at", d.created_at));
  KILN_TRY(attribute_str(loc, "run_report", d.run_report));
  KILN_TRY(attribute_i64(loc, "fallbacks", d.fallbacks));
  KILN_TRY(attribute_str(loc, "compression", a.compression));
  KILN_TRY(attribute_i64(loc, "total", a.total));
  KILN_TRY(attribute_i64(loc, "images_per_file", a.images_per_file));
  KILN_TRY(attribute_i64(loc, "count", a.count));
  KILN_TRY(attribute_i64(loc, "first_index", a.first_index));
  KILN_TRY(attribute_i8(loc, "complete", a.complete ? 1 : 0));
  return Status::ok();
}

Status complete_set(hid_t loc) {
  KILN_TRY_ASSIGN(Handle attr, attribute_open(loc, "complete"));
  const int8_t one = 1;
  if (H5Awrite(attr.get(), H5T_NATIVE_INT8, &one) < 0) return error("cannot set attribute complete");
  return attr.close();
}

Result<FileAttributes> attributes_read(hid_t loc) {
  FileAttributes a;
  DatasetAttributes& d = a.dataset;
  KILN_TRY_ASSIGN(d.seq_len, attribute_read_i64(loc, "seq_len"));
  KILN_TRY_ASSIGN(d.stride, attribute_read_i64(loc, "stride"));
  KILN_TRY_ASSIGN(d.line_width, attribute_read_f64(loc, "line_width"));
  KILN_TRY_ASSIGN(d.style, attribute_read_str(loc, "style"));
  KILN_TRY_ASSIGN(std::vector<int64_t> resolution, attribute_read_i64_array(loc, "resolution"));
  if (resolution.size() != 3) return io_error("attribute resolution must hold {width, height, dpi}");
  d.width = static_cast<int32_t>(resolution[0]);
  d.height = static_cast<int32_t>(resolution[1]);
  d.dpi = static_cast<int32_t>(resolution[2]);
  KILN_TRY_ASSIGN(d.source, attribute_read_str(loc, "source"));
  KILN_TRY_ASSIGN(d.column, attribute_read_str(loc, "column"));
  KILN_TRY_ASSIGN(d.skipped_windows, attribute_read_i64(loc, "skipped_windows"));
  KILN_TRY_ASSIGN(d.dropped_no_future, attribute_read_i64(loc, "dropped_no_future"));
  KILN_TRY_ASSIGN(d.label_horizon, attribute_read_i64(loc, "label_horizon"));
  KILN_TRY_ASSIGN(d.label_threshold, attribute_read_f64(loc, "label_threshold"));
  KILN_TRY_ASSIGN(d.kiln_version, attribute_read_str(loc, "kiln_version"));
  KILN_TRY_ASSIGN(d.config_json, attribute_read_str(loc, "config"));
  KILN_TRY_ASSIGN(d.created_at, attribute_read_str(loc, "created_at"));
  KILN_TRY_ASSIGN(a.compression, attribute_read_str(loc, "compression"));
  KILN_TRY_ASSIGN(a.total, attribute_read_i64(loc, "total"));
  KILN_TRY_ASSIGN(a.images_per_file, attribute_read_i64(loc, "images_per_file"));
  KILN_TRY_ASSIGN(a.count, attribute_read_i64(loc, "count"));
  KILN_TRY_ASSIGN(a.first_index, attribute_read_i64(loc, "first_index"));
  KILN_TRY_ASSIGN(const int64_t complete, attribute_read_i64(loc, "complete"));
  a.complete = complete == 1;
  return a;
}

namespace {

Result<std::vector<hsize_t>> dataset_dims(hid_t dataset) {
  Handle space = space_handle(H5Dget_space(dataset));
  if (!space.valid()) return error("cannot read dataspace");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) return error("cannot read rank");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0) return error("cannot read dims");
  return dims;
}

Result<Handle> dataset_open(hid_t file, const char* name) {
  const htri_t exists = H5Lexists(file, name, H5P_DEFAULT);
  if (exists <= 0) return io_error(std::string("missing dataset '") + name + "' (not a kiln HDF5 file?)");
  const hid_t id = H5Dopen2(file, name, H5P_DEFAULT);
  if (id < 0) return error(std::string("cannot open dataset ") + name);
  return dataset_handle(id);
}

}  // namespace

Result<FileShape> shape_read(hid_t file) {
  FileShape shape;
  {
    KILN_TRY_ASSIGN(Handle images, dataset_open(file, "images"));
    KILN_TRY_ASSIGN(std::vector<hsize_t> dims, dataset_dims(images.get()));
    if (dims.size() != 3) return io_error("dataset images must be (n, height, width)");
    shape.count = static_cast<int64_t>(dims[0]);
    shape.height = static_cast<int32_t>(dims[1]);
    shape.width = static_cast<int32_t>(dims[2]);
    Handle type = type_handle(H5Dget_type(images.get()));
    if (!type.valid()) return error("cannot read images type");
    const H5T_class_t cls = H5Tget_class(type.get());
    const size_t size = H5Tget_size(type.get());
    if (cls == H5T_INTEGER && size == 1) {
      shape.dtype = PixelType::kU8;
    } else if (cls == H5T_FLOAT && size == 4) {
      shape.dtype = PixelType::kF32;
    } else {
      return io_error("dataset images is neither uint8 nor float32");
    }
    Handle dcpl = plist_handle(H5Dget_create_plist(images.get()));
    if (!dcpl.valid()) return error("cannot read images creation properties");
    shape.is_virtual = H5Pget_layout(dcpl.get()) == H5D_VIRTUAL;
  }
  {
    KILN_TRY_ASSIGN(Handle sequences, dataset_open(file, "sequences"));
    KILN_TRY_ASSIGN(std::vector<hsize_t> dims, dataset_dims(sequences.get()));
    if (dims.size() != 2 && dims.size() != 3) return io_error("dataset sequences must be (n, seq_len[, 4])");
    shape.seq_len = static_cast<int32_t>(dims[1]);
    shape.seq_channels = dims.size() == 3 ? static_cast<int32_t>(dims[2]) : 1;
  }
  const htri_t labels = H5Lexists(file, "labels", H5P_DEFAULT);
  if (labels < 0) return error("cannot check dataset labels");
  shape.has_labels = labels > 0;
  return shape;
}

hid_t file_access_plist() {
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0) return fapl;
  if (H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110) < 0 ||
      H5Pset_cache(fapl, 0, kChunkCacheSlots, kChunkCacheBytes, 1.0) < 0 ||
      H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
      H5Pset_file_locking(fapl, 1, 1) < 0) {  // lock, but tolerate filesystems without flock (NFS)
    H5Pclose(fapl);
    return H5I_INVALID_HID;
  }
  return fapl;
}

Result<Handle> file_open_read(const std::string& path) {
  KILN_TRY(hdf5_zstd_register());
  Handle fapl = plist_handle(file_access_plist());
  if (!fapl.valid()) return error("cannot create file access properties");
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get());
  if (id < 0) return error(path + ": cannot open as HDF5");
  return file_handle(id);
}

Status run_report_update(const std::string& path, const std::string& run_report, int64_t fallbacks) {
  {
    Handle fapl = plist_handle(file_access_plist());
    if (!fapl.valid()) return error("cannot create file access properties");
    const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get());
    if (id < 0) return error(path + ": cannot open for writing");
    Handle file = file_handle(id);
    KILN_TRY(attribute_str(file.get(), "run_report", run_report));
    KILN_TRY(attribute_i64(file.get(), "fallbacks", fallbacks));
    KILN_TRY(file.close());
  }
  return file_fsync(path);
}

Result<FileSummary> file_summary_read(const std::string& path) {
  KILN_TRY_ASSIGN(Handle file, file_open_read(path));
  FileSummary summary;
  auto with_path = [&](const Status& s) { return Status(s.code(), path + ": " + s.message()); };
  auto attributes = attributes_read(file.get());
  if (!attributes.is_ok()) return with_path(attributes.status());
  summary.attributes = std::move(attributes).value();
  auto shape = shape_read(file.get());
  if (!shape.is_ok()) return with_path(shape.status());
  summary.shape = shape.value();
  if (!summary.shape.is_virtual) {
    Handle images = dataset_handle(H5Dopen2(file.get(), "images", H5P_DEFAULT));
    if (images.valid()) summary.image_bytes = H5Dget_storage_size(images.get());
  }
  KILN_TRY(file.close());
  return summary;
}

namespace {

bool same_double(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

template <typename T>
std::string diff_line(const char* name, const T& have, const T& want) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (have.size() > 48 || want.size() > 48) return std::string(name) + " differs";
    return std::string(name) + ": '" + have + "' in the existing file, '" + want + "' now";
  } else {
    std::string h, w;
    if constexpr (std::is_floating_point_v<T>) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.17g", have);
      h = buf;
      std::snprintf(buf, sizeof(buf), "%.17g", want);
      w = buf;
    } else {
      h = std::to_string(have);
      w = std::to_string(want);
    }
    return std::string(name) + ": " + h + " in the existing file, " + w + " now";
  }
}

}  // namespace

std::string settings_diff(const FileAttributes& have, const FileShape& have_shape, const FileAttributes& want,
                          const DatasetLayout& layout) {
  const DatasetAttributes& h = have.dataset;
  const DatasetAttributes& w = want.dataset;
#define KILN_DIFF(name, a, b) \
  if (!((a) == (b))) return diff_line(name, a, b)
#define KILN_DIFF_F(name, a, b) \
  if (!same_double(a, b)) return diff_line(name, a, b)
  KILN_DIFF("seq_len", h.seq_len, w.seq_len);
  KILN_DIFF("stride", h.stride, w.stride);
  KILN_DIFF_F("line_width", h.line_width, w.line_width);
  KILN_DIFF("style", h.style, w.style);
  KILN_DIFF("width", h.width, w.width);
  KILN_DIFF("height", h.height, w.height);
  KILN_DIFF("dpi", h.dpi, w.dpi);
  KILN_DIFF("source", h.source, w.source);
  KILN_DIFF("column", h.column, w.column);
  KILN_DIFF("skipped_windows", h.skipped_windows, w.skipped_windows);
  KILN_DIFF("dropped_no_future", h.dropped_no_future, w.dropped_no_future);
  KILN_DIFF("label_horizon", h.label_horizon, w.label_horizon);
  KILN_DIFF_F("label_threshold", h.label_threshold, w.label_threshold);
  KILN_DIFF("kiln_version", h.kiln_version, w.kiln_version);
  KILN_DIFF("config", h.config_json, w.config_json);
  KILN_DIFF("compression", have.compression, want.compression);
  KILN_DIFF("total images", have.total, want.total);
  KILN_DIFF("images_per_file", have.images_per_file, want.images_per_file);
  KILN_DIFF("image width", have_shape.width, layout.width);
  KILN_DIFF("image height", have_shape.height, layout.height);
  KILN_DIFF("image dtype", std::string(pixel_type_name(have_shape.dtype)), std::string(pixel_type_name(layout.dtype)));
  KILN_DIFF("sequence length", have_shape.seq_len, layout.seq_len);
  KILN_DIFF("sequence channels", have_shape.seq_channels, layout.seq_channels);
  KILN_DIFF("labels", static_cast<int>(have_shape.has_labels), static_cast<int>(layout.has_labels));
#undef KILN_DIFF
#undef KILN_DIFF_F
  return {};
}

DatasetLayout layout_from(const FileAttributes& attributes, const FileShape& shape) {
  DatasetLayout layout;
  layout.total = attributes.total;
  layout.width = shape.width;
  layout.height = shape.height;
  layout.dtype = shape.dtype;
  layout.seq_len = shape.seq_len;
  layout.seq_channels = shape.seq_channels;
  layout.has_labels = shape.has_labels;
  return layout;
}

// ---- data files -----------------------------------------------------------------------------------------

Status RowWriter::create(hid_t file, const char* name, hid_t file_type, hid_t mem_type, size_t elem_size,
                         std::vector<hsize_t> row_shape, int64_t rows, bool shuffle) {
  m_mem_type = mem_type;
  m_row_shape = std::move(row_shape);
  m_rows = rows;
  m_row_bytes = elem_size;
  for (hsize_t d : m_row_shape) m_row_bytes *= d;
  if (m_row_bytes == 0) return invalid_argument(std::string("dataset ") + name + " has empty rows");
  m_chunk_rows = std::clamp<int64_t>(static_cast<int64_t>(kSmallChunkTargetBytes / m_row_bytes), 1, 65536);
  if (rows > 0) m_chunk_rows = std::min(m_chunk_rows, rows);
  m_written = 0;
  m_buffered = 0;
  m_buffer.assign(static_cast<size_t>(m_chunk_rows) * m_row_bytes, 0);

  std::vector<hsize_t> dims{static_cast<hsize_t>(rows)};
  std::vector<hsize_t> maxdims{rows > 0 ? static_cast<hsize_t>(rows) : H5S_UNLIMITED};
  std::vector<hsize_t> chunk{static_cast<hsize_t>(m_chunk_rows)};
  for (hsize_t d : m_row_shape) {
    dims.push_back(d);
    maxdims.push_back(d);
    chunk.push_back(d);
  }
  Handle space = space_handle(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), maxdims.data()));
  Handle dcpl = plist_handle(H5Pcreate(H5P_DATASET_CREATE));
  if (!space.valid() || !dcpl.valid()) return error(std::string("cannot prepare dataset ") + name);
  if (H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()) < 0 ||
      (shuffle && H5Pset_shuffle(dcpl.get()) < 0) || H5Pset_deflate(dcpl.get(), 1) < 0 ||
      H5Pset_obj_track_times(dcpl.get(), 0) < 0) {
    return error(std::string("cannot set properties of dataset ") + name);
  }
  const hid_t id = H5Dcreate2(file, name, file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT);
  if (id < 0) return error(std::string("cannot create dataset ") + name);
  m_dataset = dataset_handle(id);
  return Status::ok();
}

Status RowWriter::append(const void* data, int64_t rows) {
  if (m_written + m_buffered + rows > m_rows) return invalid_argument("more rows than the dataset holds");
  const auto* src = static_cast<const uint8_t*>(data);
  while (rows > 0) {
    const int64_t n = std::min(rows, m_chunk_rows - m_buffered);
    std::memcpy(m_buffer.data() + static_cast<size_t>(m_buffered) * m_row_bytes, src,
                static_cast<size_t>(n) * m_row_bytes);
    m_buffered += n;
    src += static_cast<size_t>(n) * m_row_bytes;
    rows -= n;
    if (m_buffered == m_chunk_rows) KILN_TRY(flush());
  }
  return Status::ok();
}

Status RowWriter::flush() {
  if (m_buffered == 0) return Status::ok();
  std::vector<hsize_t> start{static_cast<hsize_t>(m_written)};
  std::vector<hsize_t> count{static_cast<hsize_t>(m_buffered)};
  for (hsize_t d : m_row_shape) {
    start.push_back(0);
    count.push_back(d);
  }
  Handle file_space = space_handle(H5Dget_space(m_dataset.get()));
  Handle mem_space = space_handle(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr));
  if (!file_space.valid() || !mem_space.valid() ||
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0 ||
      H5Dwrite(m_dataset.get(), m_mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, m_buffer.data()) < 0) {
    return error("cannot write metadata rows");
  }
  m_written += m_buffered;
  m_buffered = 0;
  return Status::ok();
}

Status RowWriter::close() {
  if (!m_dataset.valid()) return Status::ok();
  KILN_TRY(flush());
  if (m_written != m_rows) {
    return io_error("metadata dataset holds " + std::to_string(m_written) + " of " + std::to_string(m_rows) + " rows");
  }
  return m_dataset.close();
}

Status DataFile::create(const std::string& path, const DatasetLayout& layout, const FileAttributes& attributes,
                        Compression compression, int32_t level) {
  abandon();
  m_path = path;
  m_count = attributes.count;
  m_image_bytes = 0;
  m_seq_row = static_cast<int64_t>(layout.seq_len) * layout.seq_channels;

  Handle fapl = plist_handle(file_access_plist());
  Handle fcpl = plist_handle(H5Pcreate(H5P_FILE_CREATE));
  if (!fapl.valid() || !fcpl.valid()) return error("cannot create file properties");
  if (H5Pset_obj_track_times(fcpl.get(), 0) < 0) H5Eclear2(H5E_DEFAULT);  // root group: best effort
  const hid_t fid = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get());
  if (fid < 0) return error(path + ": cannot create");
  m_file = file_handle(fid);
  KILN_TRY(attributes_write(m_file.get(), attributes));

  // images: (n, H, W), one image per chunk, the filter declared so any reader decodes the raw chunks.
  const hsize_t n = static_cast<hsize_t>(m_count);
  const hsize_t dims[3] = {n, static_cast<hsize_t>(layout.height), static_cast<hsize_t>(layout.width)};
  const hsize_t maxdims[3] = {n > 0 ? n : H5S_UNLIMITED, dims[1], dims[2]};
  const hsize_t chunk[3] = {1, dims[1], dims[2]};
  Handle space = space_handle(H5Screate_simple(3, dims, maxdims));
  Handle dcpl = plist_handle(H5Pcreate(H5P_DATASET_CREATE));
  if (!space.valid() || !dcpl.valid() || H5Pset_chunk(dcpl.get(), 3, chunk) < 0 ||
      H5Pset_obj_track_times(dcpl.get(), 0) < 0) {
    return error(path + ": cannot prepare dataset images");
  }
  if (compression == Compression::kZstd) {
    const unsigned int cd_values[1] = {static_cast<unsigned int>(level)};
    if (H5Pset_filter(dcpl.get(), static_cast<H5Z_filter_t>(kHdf5ZstdFilterId), H5Z_FLAG_OPTIONAL, 1, cd_values) < 0) {
      return error(path + ": cannot declare the zstd filter");
    }
  } else if (compression == Compression::kGzip) {
    if (H5Pset_deflate(dcpl.get(), static_cast<unsigned>(level)) < 0) return error(path + ": cannot declare deflate");
  }
  const hid_t file_type = layout.dtype == PixelType::kU8 ? H5T_STD_U8LE : H5T_IEEE_F32LE;
  const hid_t images = H5Dcreate2(m_file.get(), "images", file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT);
  if (images < 0) return error(path + ": cannot create dataset images");
  m_images = dataset_handle(images);

  std::vector<hsize_t> seq_shape{static_cast<hsize_t>(layout.seq_len)};
  if (layout.seq_channels != 1) seq_shape.push_back(static_cast<hsize_t>(layout.seq_channels));
  KILN_TRY(m_sequences.create(m_file.get(), "sequences", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, sizeof(float), seq_shape,
                              m_count, true));
  KILN_TRY(m_index.create(m_file.get(), "index", H5T_STD_I64LE, H5T_NATIVE_INT64, sizeof(int64_t), {}, m_count, true));
  if (layout.has_labels) {
    KILN_TRY(m_labels.create(m_file.get(), "labels", H5T_STD_I8LE, H5T_NATIVE_INT8, sizeof(int8_t), {}, m_count,
                             false));
  }
  return Status::ok();
}

Status DataFile::image_write(int64_t row, const void* data, size_t size, uint32_t filter_mask) {
  if (row < 0 || row >= m_count) return invalid_argument("image row out of range");
  const hsize_t offset[3] = {static_cast<hsize_t>(row), 0, 0};
  if (H5Dwrite_chunk(m_images.get(), H5P_DEFAULT, filter_mask, offset, size, data) < 0) {
    return error(m_path + ": cannot write image chunk " + std::to_string(row));
  }
  m_image_bytes += size;
  return Status::ok();
}

Status DataFile::rows_append(const float* sequences, const int64_t* index, const int8_t* labels, int64_t rows) {
  KILN_TRY(m_sequences.append(sequences, rows));
  KILN_TRY(m_index.append(index, rows));
  if (m_labels.valid()) {
    if (labels == nullptr) return invalid_argument("labels missing for a dataset with labels");
    KILN_TRY(m_labels.append(labels, rows));
  }
  return Status::ok();
}

Status DataFile::close(bool complete) {
  KILN_TRY(m_sequences.close());
  KILN_TRY(m_index.close());
  KILN_TRY(m_labels.close());
  KILN_TRY(m_images.close());
  if (complete) KILN_TRY(complete_set(m_file.get()));
  return m_file.close();
}

void DataFile::abandon() {
  m_sequences = RowWriter();
  m_index = RowWriter();
  m_labels = RowWriter();
  m_images.reset();
  m_file.reset();
}

}  // namespace kiln::hdf5
