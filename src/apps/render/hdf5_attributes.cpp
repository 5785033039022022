// Root attributes of kiln HDF5 files: write, read, compare for resume.
#include "apps/render/hdf5_dataset.h"

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
  if (a.shard_count > 0) {
    KILN_TRY(attribute_i64(loc, "shard_index", a.shard_index));
    KILN_TRY(attribute_i64(loc, "shard_count", a.shard_count));
  }
  if (!a.images_file.empty()) KILN_TRY(attribute_str(loc, "images_file", a.images_file));
  KILN_TRY(attribute_i8(loc, "complete", a.complete ? 1 : 0));
  return Status::ok();
}

Status complete_set(hid_t loc) {
  KILN_TRY_ASSIGN(Handle attr, attribute_open(loc, "complete"));
  const int8_t one = 1;
  if (H5Awrite(attr.get(), H5T_NATIVE_INT8, &one) < 0) return error("cannot set attribute complete");
  return attr.close();
}

Status checksum_set(hid_t loc, const std::string& checksum) { return attribute_str(loc, "checksum", checksum); }

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
  const htri_t is_piece = H5Aexists(loc, "shard_count");
  if (is_piece < 0) return error("cannot check attribute shard_count");
  if (is_piece > 0) {
    KILN_TRY_ASSIGN(a.shard_index, attribute_read_i64(loc, "shard_index"));
    KILN_TRY_ASSIGN(a.shard_count, attribute_read_i64(loc, "shard_count"));
  }
  KILN_TRY_ASSIGN(const int64_t complete, attribute_read_i64(loc, "complete"));
  a.complete = complete == 1;
  const htri_t has_checksum = H5Aexists(loc, "checksum");
  if (has_checksum < 0) return error("cannot check attribute checksum");
  if (has_checksum > 0) {
    KILN_TRY_ASSIGN(a.checksum, attribute_read_str(loc, "checksum"));
  }
  const htri_t has_images_file = H5Aexists(loc, "images_file");
  if (has_images_file < 0) return error("cannot check attribute images_file");
  if (has_images_file > 0) {
    KILN_TRY_ASSIGN(a.images_file, attribute_read_str(loc, "images_file"));
  }
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
    if (dims.size() != 3 && !(dims.size() == 4 && dims[3] == 3)) {
      return io_error("dataset images must be (n, height, width) or (n, height, width, 3)");
    }
    shape.count = static_cast<int64_t>(dims[0]);
    shape.height = static_cast<int32_t>(dims[1]);
    shape.width = static_cast<int32_t>(dims[2]);
    shape.channels = dims.size() == 4 ? static_cast<int32_t>(dims[3]) : 1;
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
  if (!summary.attributes.images_file.empty()) {
    KILN_TRY_ASSIGN(const std::vector<uint64_t> refs, image_refs_read(file.get(), summary.shape.count));
    for (size_t r = 0; r < refs.size(); r += 3) summary.image_bytes += refs[r + 1];
  } else if (!summary.shape.is_virtual) {
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
  KILN_DIFF("shard_index", have.shard_index, want.shard_index);
  KILN_DIFF("shard_count", have.shard_count, want.shard_count);
  KILN_DIFF("image width", have_shape.width, layout.width);
  KILN_DIFF("image height", have_shape.height, layout.height);
  KILN_DIFF("image channels", have_shape.channels, layout.channels);
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
  layout.channels = shape.channels;
  layout.dtype = shape.dtype;
  layout.seq_len = shape.seq_len;
  layout.seq_channels = shape.seq_channels;
  layout.has_labels = shape.has_labels;
  return layout;
}

}  // namespace kiln::hdf5
