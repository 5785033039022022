// DataFile: one kiln HDF5 file being written (images by direct chunk write, metadata rows buffered per chunk).
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

#include "io/hdf5_times.h"
#include "io/hdf5_zstd_register.h"

namespace kiln::hdf5 {

namespace fs = std::filesystem;

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
                        Compression compression, int32_t level, bool fletcher32) {
  abandon();
  m_path = path;
  m_count = attributes.count;
  m_rows = 0;
  m_fletcher32 = fletcher32 && compression == Compression::kZstd;
  m_image_bytes = 0;
  m_seq_row = static_cast<int64_t>(layout.seq_len) * layout.seq_channels;
  m_checksum = ContentChecksum();
  m_has_labels = layout.has_labels;
  m_images_elsewhere = !attributes.images_file.empty();
  m_refs.assign(m_images_elsewhere ? static_cast<size_t>(m_count) * 3 : 0, 0);

  Handle fapl = plist_handle(file_access_plist());
  Handle fcpl = plist_handle(H5Pcreate(H5P_FILE_CREATE));
  if (!fapl.valid() || !fcpl.valid()) return error("cannot create file properties");
  if (H5Pset_obj_track_times(fcpl.get(), 0) < 0) H5Eclear2(H5E_DEFAULT);  // root group: best effort
  // Every allocation at the end of the file (no aggregators, no reuse of freed space), so that image_write knows
  // where a chunk went from how the end moved.
  if (H5Pset_file_space_strategy(fcpl.get(), H5F_FSPACE_STRATEGY_NONE, 0, 1) < 0) {
    return error(path + ": cannot set the file space strategy");
  }
  const hid_t fid = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get());
  if (fid < 0) return error(path + ": cannot create");
  m_file = file_handle(fid);
  KILN_TRY(attributes_write(m_file.get(), attributes));

  // images: (n, H, W), or (n, H, W, 3) in colour, one image per chunk, the filter declared so any reader decodes the
  // raw chunks.
  const hsize_t n = static_cast<hsize_t>(m_count);
  const int rank = layout.channels > 1 ? 4 : 3;
  const hsize_t dims[4] = {n, static_cast<hsize_t>(layout.height), static_cast<hsize_t>(layout.width),
                           static_cast<hsize_t>(layout.channels)};
  const hsize_t maxdims[4] = {n > 0 ? n : H5S_UNLIMITED, dims[1], dims[2], dims[3]};
  const hsize_t chunk[4] = {1, dims[1], dims[2], dims[3]};
  Handle space = space_handle(H5Screate_simple(rank, dims, maxdims));
  Handle dcpl = plist_handle(H5Pcreate(H5P_DATASET_CREATE));
  if (!space.valid() || !dcpl.valid() || H5Pset_chunk(dcpl.get(), rank, chunk) < 0 ||
      H5Pset_obj_track_times(dcpl.get(), 0) < 0) {
    return error(path + ": cannot prepare dataset images");
  }
  if (compression == Compression::kZstd) {
    const unsigned int cd_values[1] = {static_cast<unsigned int>(level)};
    if (H5Pset_filter(dcpl.get(), static_cast<H5Z_filter_t>(kHdf5ZstdFilterId), H5Z_FLAG_OPTIONAL, 1, cd_values) < 0) {
      return error(path + ": cannot declare the zstd filter");
    }
    if (m_fletcher32 && H5Pset_fletcher32(dcpl.get()) < 0) return error(path + ": cannot declare fletcher32");
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

Status DataFile::image_write(int64_t row, const void* data, size_t size, uint32_t filter_mask, StoredChunk* stored) {
  if (m_images_elsewhere) return invalid_argument(m_path + " records where its images lie (image_ref_write)");
  if (row < 0 || row >= m_count) return invalid_argument("image row out of range");
  const hsize_t offset[4] = {static_cast<hsize_t>(row), 0, 0, 0};
  haddr_t eoa_before = HADDR_UNDEF;
  if (stored != nullptr && H5Fget_eoa(m_file.get(), &eoa_before) < 0) return error(m_path + ": cannot read the EOA");
  if (H5Dwrite_chunk(m_images.get(), H5P_DEFAULT, filter_mask, offset, size, data) < 0) {
    return error(m_path + ": cannot write image chunk " + std::to_string(row));
  }
  m_image_bytes += size;
  if (stored == nullptr) {
    m_checksum.image_add(data, size, filter_mask);
    return Status::ok();
  }
  // With no aggregators (the file space strategy of create()) every allocation is at the end of the file: when the
  // end grew by exactly the chunk's size, that is where it went; otherwise (a block of the chunk index was allocated
  // too) the index is asked, which in HDF5 1.10 means a search of every chunk.
  haddr_t eoa_after = HADDR_UNDEF;
  if (H5Fget_eoa(m_file.get(), &eoa_after) < 0) return error(m_path + ": cannot read the EOA");
  if (eoa_after == eoa_before + size) {
    stored->address = eoa_before;
  } else {
    KILN_TRY_ASSIGN(stored->address, image_address(row));
  }
  Crc32 crc;
  crc.update(data, size);
  stored->crc = crc.value();
  m_checksum.image_add_crc(stored->crc, size, filter_mask);
  return Status::ok();
}

Status DataFile::rows_append(const float* sequences, const int64_t* index, const int8_t* labels, int64_t rows) {
  KILN_TRY(m_sequences.append(sequences, rows));
  KILN_TRY(m_index.append(index, rows));
  if (m_labels.valid()) {
    if (labels == nullptr) return invalid_argument("labels missing for a dataset with labels");
    KILN_TRY(m_labels.append(labels, rows));
  }
  m_checksum.rows_add(sequences, static_cast<size_t>(m_seq_row), index, m_labels.valid() ? labels : nullptr, rows);
  m_rows += rows;
  return Status::ok();
}

Status DataFile::close(bool complete) {
  KILN_TRY(m_sequences.close());
  KILN_TRY(m_index.close());
  KILN_TRY(m_labels.close());
  KILN_TRY(m_images.close());
  if (complete) {
    if (m_images_elsewhere) KILN_TRY(image_refs_close());
    KILN_TRY(checksum_set(m_file.get(), m_checksum.text(m_has_labels)));
    KILN_TRY(complete_set(m_file.get()));
  }
  KILN_TRY(m_file.close());
  return superblock_extension_times_clear(m_path);  // the file space strategy's extension: same job, same bytes
}

void DataFile::abandon() {
  m_sequences = RowWriter();
  m_index = RowWriter();
  m_labels = RowWriter();
  m_images.reset();
  m_file.reset();
}

}  // namespace kiln::hdf5
