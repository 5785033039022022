// Parts whose images lie in the run's draft (hdf5_dataset.h, draft_path): writing where each image went, and reading
// image chunks from wherever a data file keeps them.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "apps/render/hdf5_dataset.h"

namespace kiln::hdf5 {

namespace {

constexpr uint64_t kMaxChunkBytes = uint64_t{1} << 32;  // one image; HDF5 chunks are limited to 4 GiB

Status image_refs_write(hid_t file, const std::vector<uint64_t>& refs) {
  const hsize_t dims[2] = {refs.size() / 3, 3};
  Handle space = space_handle(H5Screate_simple(2, dims, nullptr));
  if (!space.valid()) return error("cannot prepare dataset image_refs");
  Handle ds =
      dataset_handle(H5Dcreate2(file, "image_refs", H5T_STD_U64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!ds.valid() ||
      (!refs.empty() && H5Dwrite(ds.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, refs.data()) < 0)) {
    return error("cannot write dataset image_refs");
  }
  return ds.close();
}

Status pread_all(int fd, void* data, size_t size, uint64_t offset, const std::string& what) {
  auto* p = static_cast<uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(what + ": read failed");
    if (n == 0) return io_error(what + " lies past the end of the file");
    p += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::ok();
}

}  // namespace

Result<int> DataFile::descriptor() const {
  void* handle = nullptr;
  if (!m_file.valid() || H5Fget_vfd_handle(m_file.get(), H5P_DEFAULT, &handle) < 0 || handle == nullptr) {
    return error(m_path + ": no file descriptor");
  }
  return *static_cast<int*>(handle);  // the sec2 driver's
}

Status DataFile::image_ref_write(int64_t row, size_t size, uint32_t filter_mask, const StoredChunk& stored) {
  if (!m_images_elsewhere) return invalid_argument(m_path + " stores its images itself");
  if (row < 0 || row >= m_count) return invalid_argument("image row out of range");
  uint64_t* ref = m_refs.data() + static_cast<size_t>(row) * 3;
  ref[0] = stored.address;
  ref[1] = size;
  ref[2] = filter_mask;
  m_image_bytes += size;
  m_checksum.image_add_crc(stored.crc, size, filter_mask);
  return Status::ok();
}

Result<uint64_t> DataFile::image_address(int64_t row) const {
  const hsize_t offset[4] = {static_cast<hsize_t>(row), 0, 0, 0};  // (n, H, W[, 3])
  unsigned mask = 0;
  haddr_t address = HADDR_UNDEF;
  hsize_t size = 0;
  if (H5Dget_chunk_info_by_coord(m_images.get(), offset, &mask, &address, &size) < 0 || address == HADDR_UNDEF) {
    return error(m_path + ": cannot locate image chunk " + std::to_string(row));
  }
  return static_cast<uint64_t>(address);
}

Status DataFile::data_sync() {
  KILN_TRY_ASSIGN(const int fd, descriptor());
  int rc = 0;
  do {
    rc = ::fdatasync(fd);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return errno_status(m_path + ": fdatasync failed");
  return Status::ok();
}

Status DataFile::image_refs_close() {
  for (int64_t r = 0; r < m_count; ++r) {
    if (m_refs[static_cast<size_t>(r) * 3 + 1] == 0) {
      return invalid_argument(m_path + ": image " + std::to_string(r) + " was never written");
    }
  }
  return image_refs_write(m_file.get(), m_refs);
}

Result<std::vector<uint64_t>> image_refs_read(hid_t file, int64_t count) {
  Handle ds = dataset_handle(H5Dopen2(file, "image_refs", H5P_DEFAULT));
  Handle space = space_handle(ds.valid() ? H5Dget_space(ds.get()) : H5I_INVALID_HID);
  hsize_t dims[2] = {0, 0};
  if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != 2 ||
      H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0) {
    return error("cannot open dataset image_refs");
  }
  if (dims[0] != static_cast<hsize_t>(count) || dims[1] != 3) return io_error("image_refs has the wrong shape");
  std::vector<uint64_t> refs(static_cast<size_t>(count) * 3);
  if (count > 0 && H5Dread(ds.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, refs.data()) < 0) {
    return error("cannot read dataset image_refs");
  }
  for (size_t r = 0; r < refs.size(); r += 3) {
    if (refs[r + 1] == 0 || refs[r + 1] > kMaxChunkBytes || refs[r + 2] > UINT32_MAX) {
      return io_error("image_refs row " + std::to_string(r / 3) + " is not a stored chunk");
    }
  }
  return refs;
}

Result<ChunkReader> ChunkReader::open(hid_t file, const std::string& path, const FileAttributes& attributes) {
  ChunkReader reader;
  reader.m_path = path;
  if (attributes.images_file.empty()) {
    reader.m_images = dataset_handle(H5Dopen2(file, "images", H5P_DEFAULT));
    if (!reader.m_images.valid()) return error(path + ": cannot open images");
    return reader;
  }
  const std::string& name = attributes.images_file;
  if (name.rfind("draft_", 0) != 0 || name.size() < 9 || name.compare(name.size() - 3, 3, ".h5") != 0 ||
      name.find('/') != std::string::npos) {
    return io_error(path + ": images_file '" + name + "' does not name a draft beside it");
  }
  auto refs = image_refs_read(file, attributes.count);
  if (!refs.is_ok()) return Status(refs.status().code(), path + ": " + refs.status().message());
  reader.m_refs = std::move(refs).value();
  reader.m_draft = (std::filesystem::path(path).parent_path() / attributes.images_file).string();
  reader.m_draft_fd = ::open(reader.m_draft.c_str(), O_RDONLY | O_CLOEXEC);
  if (reader.m_draft_fd < 0) return errno_status(reader.m_draft + " (the images of " + path + "): cannot open");
  reader.m_draft_closer = std::make_unique<FdCloser>(reader.m_draft_fd);
  // Every image within the draft as it is on disk: a damaged part cannot make a read allocate more than that.
  struct stat st {};
  if (::fstat(reader.m_draft_fd, &st) != 0) return errno_status(reader.m_draft + ": cannot stat");
  const auto draft_size = static_cast<uint64_t>(st.st_size);
  for (size_t r = 0; r < reader.m_refs.size(); r += 3) {
    if (reader.m_refs[r] > draft_size || reader.m_refs[r + 1] > draft_size - reader.m_refs[r]) {
      return io_error(path + ": image " + std::to_string(r / 3) + " lies past the end of " + name);
    }
  }
  return reader;
}

Status ChunkReader::read(int64_t row, std::vector<uint8_t>* chunk, uint32_t* filter_mask) {
  if (m_draft_fd < 0) {
    const hsize_t offset[4] = {static_cast<hsize_t>(row), 0, 0, 0};  // (n, H, W[, 3])
    hsize_t size = 0;
    if (H5Dget_chunk_storage_size(m_images.get(), offset, &size) < 0 || size == 0) {
      return error("image chunk " + std::to_string(row) + " is missing");
    }
    chunk->resize(size);
    if (H5Dread_chunk(m_images.get(), H5P_DEFAULT, offset, filter_mask, chunk->data()) < 0) {
      return error("cannot read image chunk " + std::to_string(row));
    }
    return Status::ok();
  }
  if (row < 0 || static_cast<size_t>(row) * 3 >= m_refs.size()) return invalid_argument("image row out of range");
  const uint64_t* ref = m_refs.data() + static_cast<size_t>(row) * 3;
  chunk->resize(ref[1]);
  *filter_mask = static_cast<uint32_t>(ref[2]);
  return pread_all(m_draft_fd, chunk->data(), chunk->size(), ref[0],
                   "image chunk " + std::to_string(row) + " in " + std::filesystem::path(m_draft).filename().string());
}

}  // namespace kiln::hdf5
