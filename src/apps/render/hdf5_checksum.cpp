// Content checksums of committed HDF5 files: computed while writing (DataFile), recomputed from the stored bytes by
// resume, merge and `kiln info --verify`, so a damaged part is rendered again instead of merged. A panel's per-image
// table has its own (hdf5_image_table.h), checked here too.
#include <algorithm>
#include <cstring>
#include <vector>

#include "apps/render/hdf5_dataset.h"
#include "apps/render/hdf5_image_table.h"
#include "core/isolated_call.h"

namespace kiln::hdf5 {

namespace {

constexpr hsize_t kRowsPerRead = 65536;

// CRC of a dataset's values in row order, read in blocks of rows (a merged output can hold millions).
Status dataset_crc(hid_t file, const char* name, hid_t mem_type, size_t row_bytes, int64_t rows, Crc32* crc) {
  Handle ds = dataset_handle(H5Dopen2(file, name, H5P_DEFAULT));
  if (!ds.valid()) return error(std::string("cannot open ") + name);
  Handle space = space_handle(H5Dget_space(ds.get()));
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank < 1) return error(std::string("cannot read the shape of ") + name);
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  if (dims[0] != static_cast<hsize_t>(rows)) return io_error(std::string(name) + " has the wrong number of rows");
  std::vector<uint8_t> buffer;
  for (hsize_t first = 0; first < dims[0]; first += kRowsPerRead) {
    std::vector<hsize_t> start(dims.size(), 0);
    std::vector<hsize_t> count = dims;
    start[0] = first;
    count[0] = std::min(kRowsPerRead, dims[0] - first);
    buffer.resize(static_cast<size_t>(count[0]) * row_bytes);
    Handle mem = space_handle(H5Screate_simple(rank, count.data(), nullptr));
    if (!mem.valid() ||
        H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0 ||
        H5Dread(ds.get(), mem_type, mem.get(), space.get(), H5P_DEFAULT, buffer.data()) < 0) {
      return error(std::string("cannot read ") + name);
    }
    crc->update(buffer.data(), buffer.size());
  }
  return Status::ok();
}

// "images=1a2b3c4d" of "crc32 images=... sequences=..." or "" when absent.
std::string field(const std::string& text, const std::string& name) {
  const std::string key = " " + name + "=";
  const size_t at = text.find(key);
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size();
  return text.substr(begin, text.find(' ', begin) - begin);
}

}  // namespace

void ContentChecksum::image_add(const void* data, size_t size, uint32_t filter_mask) {
  const uint64_t size64 = size;
  images.update(&size64, sizeof(size64));
  images.update(&filter_mask, sizeof(filter_mask));
  images.update(data, size);
}

void ContentChecksum::image_add_crc(uint32_t data_crc, size_t size, uint32_t filter_mask) {
  const uint64_t size64 = size;
  images.update(&size64, sizeof(size64));
  images.update(&filter_mask, sizeof(filter_mask));
  images.append(data_crc, size);
}

void ContentChecksum::rows_add(const float* sequences_data, size_t seq_row, const int64_t* index_data,
                               const int8_t* labels_data, int64_t rows) {
  const auto n = static_cast<size_t>(rows);
  sequences.update(sequences_data, n * seq_row * sizeof(float));
  index.update(index_data, n * sizeof(int64_t));
  if (labels_data != nullptr) labels.update(labels_data, n);
}

std::string ContentChecksum::text(bool has_labels) const {
  std::string text = "crc32 images=" + images.hex() + " sequences=" + sequences.hex() + " index=" + index.hex();
  if (has_labels) text += " labels=" + labels.hex();
  return text;
}

Result<std::string> checksum_compute(hid_t file, const std::string& path, const FileShape& shape) {
  if (shape.is_virtual) return invalid_argument("a virtual dataset has no content of its own; check its files");
  KILN_TRY_ASSIGN(const FileAttributes attributes, attributes_read(file));
  KILN_TRY_ASSIGN(ChunkReader images, ChunkReader::open(file, path, attributes));
  ContentChecksum sum;
  std::vector<uint8_t> chunk;
  for (int64_t r = 0; r < shape.count; ++r) {
    uint32_t mask = 0;
    KILN_TRY(images.read(r, &chunk, &mask));
    sum.image_add(chunk.data(), chunk.size(), mask);
  }
  const size_t seq_row = static_cast<size_t>(shape.seq_len) * static_cast<size_t>(shape.seq_channels);
  KILN_TRY(dataset_crc(file, "sequences", H5T_NATIVE_FLOAT, seq_row * sizeof(float), shape.count, &sum.sequences));
  KILN_TRY(dataset_crc(file, "index", H5T_NATIVE_INT64, sizeof(int64_t), shape.count, &sum.index));
  if (shape.has_labels) KILN_TRY(dataset_crc(file, "labels", H5T_NATIVE_INT8, 1, shape.count, &sum.labels));
  return sum.text(shape.has_labels);
}

Status checksum_verify(const std::string& path, bool* present) {
  ErrorScope quiet;
  KILN_TRY_ASSIGN(Handle file, file_open_read(path));
  KILN_TRY_ASSIGN(const FileAttributes attributes, attributes_read(file.get()));
  if (present != nullptr) *present = !attributes.checksum.empty();
  KILN_TRY(image_table_verify(file.get(), path));  // a panel's table, kept beside the content (also in a VDS file)
  if (attributes.checksum.empty()) return Status::ok();
  KILN_TRY_ASSIGN(const FileShape shape, shape_read(file.get()));
  Result<std::string> computed = checksum_compute(file.get(), path, shape);
  if (!computed.is_ok()) return io_error(path + " is damaged: " + computed.status().message());
  if (*computed == attributes.checksum) return Status::ok();
  for (const char* name : {"images", "sequences", "index", "labels"}) {
    const std::string now = field(*computed, name);
    const std::string stored = field(attributes.checksum, name);
    if (now != stored) return io_error(path + " is damaged: " + name + " checksum " + now + ", stored " + stored);
  }
  return io_error(path + " is damaged: checksum " + *computed + ", stored " + attributes.checksum);
}

Status checksum_verify_isolated(const std::string& path, bool* present) {
  const auto check = [&]() -> Result<std::vector<uint8_t>> {
    KILN_TRY(file_summary_read(path).status());
    bool stored = false;
    KILN_TRY(checksum_verify(path, &stored));
    return std::vector<uint8_t>{static_cast<uint8_t>(stored ? 1 : 0)};
  };
  auto result = isolated_call(check, path);
  if (!result.is_ok()) {
    const std::string& message = result.status().message();
    const bool child_died = message.rfind(path + ": the reader ", 0) == 0;  // crashed, or a sanitizer's exit
    if (!child_died) return result.status();
    return io_error(path + " is damaged: " + message.substr(path.size() + 2));
  }
  if (present != nullptr) *present = result->size() == 1 && (*result)[0] == 1;
  return Status::ok();
}

}  // namespace kiln::hdf5
