// Joins complete data files (the parts of a single-file run, the pieces of a sharded job) into one, moving the
// compressed image chunks as they are and checking each source's checksum while copying.
#include <filesystem>

#include "apps/render/hdf5_dataset.h"

namespace kiln::hdf5 {

namespace {

// Whether a file's images carry HDF5's Fletcher-32 trailer (files written before kiln added it do not).
Result<bool> images_have_fletcher32(hid_t file, const std::string& path) {
  Handle images = dataset_handle(H5Dopen2(file, "images", H5P_DEFAULT));
  Handle dcpl = plist_handle(images.valid() ? H5Dget_create_plist(images.get()) : H5I_INVALID_HID);
  if (!dcpl.valid()) return error(path + ": cannot read the filters of images");
  const bool has =
      H5Pget_filter_by_id2(dcpl.get(), H5Z_FILTER_FLETCHER32, nullptr, nullptr, nullptr, 0, nullptr, nullptr) >= 0;
  H5Eclear2(H5E_DEFAULT);  // the lookup reports a missing filter as an error
  return has;
}

Status rows_read(hid_t file, const std::string& path, const char* name, hid_t mem_type, int64_t count, void* dst) {
  Handle ds = dataset_handle(H5Dopen2(file, name, H5P_DEFAULT));
  if (!ds.valid() || (count > 0 && H5Dread(ds.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, dst) < 0)) {
    return error(path + ": cannot read " + name);
  }
  return ds.close();
}

// A data file's metadata rows.
struct Rows {
  std::vector<float> sequences;
  std::vector<int64_t> index;
  std::vector<int8_t> labels;
  const int8_t* label_rows(const DatasetLayout& layout) const { return layout.has_labels ? labels.data() : nullptr; }
};

Status rows_load(hid_t file, const std::string& path, const DatasetLayout& layout, int64_t count, Rows* rows) {
  const size_t seq_row = static_cast<size_t>(layout.seq_len) * static_cast<size_t>(layout.seq_channels);
  rows->sequences.resize(static_cast<size_t>(count) * seq_row);
  rows->index.resize(static_cast<size_t>(count));
  rows->labels.resize(static_cast<size_t>(count));
  KILN_TRY(rows_read(file, path, "sequences", H5T_NATIVE_FLOAT, count, rows->sequences.data()));
  KILN_TRY(rows_read(file, path, "index", H5T_NATIVE_INT64, count, rows->index.data()));
  if (layout.has_labels) KILN_TRY(rows_read(file, path, "labels", H5T_NATIVE_INT8, count, rows->labels.data()));
  return Status::ok();
}

}  // namespace

Result<std::pair<Compression, int32_t>> compression_from_label(const std::string& label) {
  if (label == "none") return std::pair{Compression::kNone, 0};
  const size_t dash = label.rfind('-');
  if (dash != std::string::npos) {
    const std::string name = label.substr(0, dash);
    const std::string level = label.substr(dash + 1);
    if ((name == "zstd" || name == "gzip") && !level.empty() && level.size() <= 2 &&
        level.find_first_not_of("0123456789") == std::string::npos) {
      return std::pair{name == "zstd" ? Compression::kZstd : Compression::kGzip, std::stoi(level)};
    }
  }
  return io_error("unknown compression attribute '" + label + "'");
}

Status files_append(DataFile& merged, const std::vector<std::string>& sources, const DatasetLayout& layout,
                    int64_t first_index, int64_t first_row, std::vector<DataFile::StoredChunk>* stored) {
  const size_t seq_row = static_cast<size_t>(layout.seq_len) * static_cast<size_t>(layout.seq_channels);
  std::vector<uint8_t> chunk;
  Rows rows;
  int64_t row = first_row;  // rows of the merged file written so far
  for (const std::string& path : sources) {
    KILN_TRY_ASSIGN(Handle file, file_open_read(path));
    KILN_TRY_ASSIGN(FileAttributes a, attributes_read(file.get()));
    const int64_t count = a.count;
    if (!a.complete || a.first_index != first_index + row || row + count > merged.count()) {
      return io_error(path + " is not the complete file of images " + std::to_string(first_index + row) +
                      "...; rerun with --resume");
    }
    KILN_TRY_ASSIGN(const bool has_fletcher32, images_have_fletcher32(file.get(), path));
    if (has_fletcher32 != merged.fletcher32()) {
      return io_error(path + (has_fletcher32 ? " has" : " lacks") + " the Fletcher-32 chunk checksum of " +
                      merged.path() + "; files written by different kiln versions cannot be merged by copying");
    }
    ContentChecksum copied;  // checked against the source's own before the merged file is committed
    KILN_TRY_ASSIGN(ChunkReader images, ChunkReader::open(file.get(), path, a));
    for (int64_t r = 0; r < count; ++r) {
      uint32_t mask = 0;
      if (const Status read = images.read(r, &chunk, &mask); !read.is_ok()) {
        return Status(read.code(), path + ": " + read.message());
      }
      DataFile::StoredChunk where;
      KILN_TRY(merged.image_write(row + r, chunk.data(), chunk.size(), mask, stored != nullptr ? &where : nullptr));
      if (stored != nullptr) stored->push_back(where);
      copied.image_add(chunk.data(), chunk.size(), mask);
    }
    KILN_TRY(rows_load(file.get(), path, layout, count, &rows));
    KILN_TRY(merged.rows_append(rows.sequences.data(), rows.index.data(), rows.label_rows(layout), count));
    copied.rows_add(rows.sequences.data(), seq_row, rows.index.data(), rows.label_rows(layout), count);
    if (!a.checksum.empty() && copied.text(layout.has_labels) != a.checksum) {
      return io_error(path + " is damaged (checksum " + copied.text(layout.has_labels) + ", stored " + a.checksum +
                      "); rerun with --resume to render it again");
    }
    KILN_TRY(file.close());
    row += count;
  }
  return Status::ok();
}

Status part_repoint(const std::string& part, const DataFile& draft, const DataFile::StoredChunk* stored,
                    const DatasetLayout& layout) {
  KILN_TRY_ASSIGN(Handle file, file_open_read(part));
  KILN_TRY_ASSIGN(FileAttributes a, attributes_read(file.get()));
  if (a.images_file.empty()) return Status::ok();  // it holds its images itself
  KILN_TRY_ASSIGN(const std::vector<uint64_t> refs, image_refs_read(file.get(), a.count));
  Rows rows;
  KILN_TRY(rows_load(file.get(), part, layout, a.count, &rows));
  KILN_TRY(file.close());
  KILN_TRY_ASSIGN(const auto compression, compression_from_label(a.compression));
  const std::string stored_checksum = a.checksum;
  a.images_file = file_name(draft.path());
  a.complete = false;
  a.checksum.clear();
  DataFile repointed;
  const std::string tmp = part + ".tmp";
  Status written = repointed.create(tmp, layout, a, compression.first, compression.second, draft.fletcher32());
  for (int64_t r = 0; written.is_ok() && r < a.count; ++r) {
    const uint64_t* ref = refs.data() + static_cast<size_t>(r) * 3;
    written = repointed.image_ref_write(r, ref[1], static_cast<uint32_t>(ref[2]), stored[r]);
  }
  if (written.is_ok()) {
    written = repointed.rows_append(rows.sequences.data(), rows.index.data(), rows.label_rows(layout), a.count);
  }
  // The same content, checked (the copies were compared with the stored checksum as files_append made them).
  if (written.is_ok() && repointed.checksum() != stored_checksum) {
    written = io_error(part + ": its images moved but their checksum changed");
  }
  if (written.is_ok()) written = repointed.close(true);
  if (!written.is_ok()) {
    repointed.abandon();
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    return written;
  }
  return file_commit(tmp, part);
}

namespace {

Status files_copy(DataFile& merged, const std::string& out, const std::vector<std::string>& sources,
                  const DatasetLayout& layout, const FileAttributes& attributes) {
  KILN_TRY_ASSIGN(const auto compression, compression_from_label(attributes.compression));
  const std::string tmp = out + ".tmp";
  FileAttributes merged_attributes = attributes;
  merged_attributes.complete = false;
  bool fletcher32 = true;
  if (!sources.empty()) {
    KILN_TRY_ASSIGN(Handle first, file_open_read(sources.front()));
    KILN_TRY_ASSIGN(fletcher32, images_have_fletcher32(first.get(), sources.front()));
  }
  KILN_TRY(merged.create(tmp, layout, merged_attributes, compression.first, compression.second, fletcher32));
  KILN_TRY(files_append(merged, sources, layout, attributes.first_index, 0));
  if (merged.rows() != attributes.count) {
    return io_error("the files hold " + std::to_string(merged.rows()) + " images, expected " +
                    std::to_string(attributes.count));
  }
  KILN_TRY(merged.close(true));
  return file_commit(tmp, out);
}

}  // namespace

Status files_concat(const std::string& out, const std::vector<std::string>& sources, const DatasetLayout& layout,
                    const FileAttributes& attributes) {
  DataFile merged;
  const Status status = files_copy(merged, out, sources, layout, attributes);
  if (!status.is_ok()) {  // nothing half-copied stays behind
    merged.abandon();
    std::error_code ec;
    std::filesystem::remove(out + ".tmp", ec);
  }
  return status;
}

}  // namespace kiln::hdf5
