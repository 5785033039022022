// The chart dataset's HDF5 files, shared by the sink, the VDS builder and `kiln info`: output naming, root
// attributes and the data-file writer.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/render/image_sink.h"
#include "io/crc32.h"
#include "io/durable_file.h"
#include "io/hdf5_handle.h"
#include "kiln/status.h"

namespace kiln::hdf5 {

inline constexpr int64_t kPartImages = 4096;            // single-file mode commits in parts of this many images
inline constexpr size_t kChunkCacheBytes = 16u << 20;   // per open dataset; small datasets only (images go direct)
inline constexpr size_t kChunkCacheSlots = 1021;        // prime, well above chunks per cache
inline constexpr size_t kSmallChunkTargetBytes = 512u << 10;

// ---- naming ---------------------------------------------------------------------------------------------

std::string parts_dir(const std::string& out);                 // demo.h5.parts
std::string part_path(const std::string& out, int64_t index);  // demo.h5.parts/part_00000.h5
std::string shard_path(const std::string& out, int64_t index); // out_batch_0000.h5 next to out.h5
std::string manifest_path(const std::string& out);             // out.manifest.json
// A single-file run of several parts writes its images once, into the draft of its output
// (demo.h5.parts/draft_0000.h5, renamed to demo.h5 when complete). Each committed part then holds the metadata rows
// and where in the draft its images lie (FileAttributes::images_file, dataset image_refs): a killed run resumes from
// the parts, starting the next draft from the images the kept parts point to.
std::string draft_path(const std::string& out, int64_t generation);
// Drafts of `out` present on disk, sorted by generation.
std::vector<std::pair<int64_t, std::string>> drafts_list(const std::string& out);
// Shard files of `out` present on disk (not .tmp), sorted by index.
std::vector<std::pair<int64_t, std::string>> shards_list(const std::string& out);
std::string file_name(const std::string& path);  // last path component

// ---- attributes -----------------------------------------------------------------------------------------

struct FileAttributes {
  DatasetAttributes dataset;
  std::string compression;      // "zstd-1", "gzip-1", "none"
  int64_t total = 0;            // images in the whole dataset
  int64_t images_per_file = 0;  // 0: single-file mode
  int64_t count = 0;            // images in this file
  int64_t first_index = 0;      // ordinal of this file's first image in the dataset
  int64_t shard_index = 0;      // a piece of a sharded job (kiln/scale.h): piece shard_index of shard_count
  int64_t shard_count = 0;      // 0: not a piece
  bool complete = false;
  std::string checksum;         // ContentChecksum::text() of a committed file; "" before it is committed
  std::string images_file;      // a part whose images lie in the run's draft: the draft's file name, else ""
};

// Shape facts read back from a file's datasets.
struct FileShape {
  int64_t count = 0;
  int32_t width = 0;
  int32_t height = 0;
  int32_t channels = 1;  // 3: colour images (n, height, width, 3)
  PixelType dtype = PixelType::kU8;
  int32_t seq_len = 0;
  int32_t seq_channels = 1;
  bool has_labels = false;
  bool is_virtual = false;
};

struct FileSummary {
  FileAttributes attributes;
  FileShape shape;
  uint64_t image_bytes = 0;  // stored bytes of `images` (for a part: of its images in the draft)
};

std::string compression_label(Compression compression, int32_t level);  // "zstd-1"
Status attributes_write(hid_t loc, const FileAttributes& attributes);
Result<FileAttributes> attributes_read(hid_t loc);
Status complete_set(hid_t loc);  // complete = 1
Status checksum_set(hid_t loc, const std::string& checksum);
Result<FileShape> shape_read(hid_t file);

hid_t file_access_plist();  // V110 libver bounds, chunk cache, strong close degree (caller closes)
Result<Handle> file_open_read(const std::string& path);
// Replaces the run_report / fallbacks attributes of a finished file in place (then fsyncs it).
Status run_report_update(const std::string& path, const std::string& run_report, int64_t fallbacks);
Result<FileSummary> file_summary_read(const std::string& path);

// "" when `have` (read from a file) was made by the same job as `want`/`layout`; otherwise the first
// difference, e.g. "stride: 2 in the existing file, 1 now". Ignores created_at, count, first_index, complete.
std::string settings_diff(const FileAttributes& have, const FileShape& have_shape, const FileAttributes& want,
                          const DatasetLayout& layout);
DatasetLayout layout_from(const FileAttributes& attributes, const FileShape& shape);

// ---- content checksums ---------------------------------------------------------------------------------

// CRC-32 of what each dataset stores, kept in the "checksum" attribute of every committed file (part, shard, merged
// output) as "crc32 images=1a2b3c4d sequences=... index=... [labels=...]". images covers each chunk's size, filter
// mask and stored bytes in row order (the compressed bytes: checking needs no decompression); the others their
// native values in row order.
struct ContentChecksum {
  Crc32 images;
  Crc32 sequences;
  Crc32 index;
  Crc32 labels;
  void image_add(const void* data, size_t size, uint32_t filter_mask);
  void image_add_crc(uint32_t data_crc, size_t size, uint32_t filter_mask);  // the same, from the bytes' own CRC-32
  // `rows` rows of the small datasets: seq_row floats of sequences per row, one index, one label (labels may be null).
  void rows_add(const float* sequences, size_t seq_row, const int64_t* index, const int8_t* labels, int64_t rows);
  std::string text(bool has_labels) const;
};

// The checksum of an open file (at `path`) recomputed from its stored bytes.
Result<std::string> checksum_compute(hid_t file, const std::string& path, const FileShape& shape);
// Recomputes `path`'s checksum and compares it with the stored one: IoError "<path> is damaged: images checksum
// 0a1b2c3d, stored 4e5f6a7b" (or unreadable) otherwise. A file with no checksum (written before kiln kept them) is
// Ok, with *present set to false when asked. A panel's per-image table is checked against its own table_checksum
// (hdf5_image_table.h) whenever the file holds one, also in a file without a content checksum (a VDS file).
Status checksum_verify(const std::string& path, bool* present = nullptr);
// The same, with the file's summary read first, in a child process (core/isolated_call.h): libhdf5 can crash on a
// damaged file (a corrupt attribute heap, seen), and a damaged part or piece must be reported — and rendered again —
// rather than end kiln. A crash comes back as IoError "<path> is damaged: libhdf5 crashed on it (signal 11) ...".
// For files this process did not just write: --resume, kiln merge, kiln info --verify.
Status checksum_verify_isolated(const std::string& path, bool* present = nullptr);

// ---- data files -----------------------------------------------------------------------------------------

// Buffers rows of one small 2-D/3-D dataset and writes whole chunks (independent of batch boundaries).
class RowWriter {
 public:
  RowWriter() = default;
  Status create(hid_t file, const char* name, hid_t file_type, hid_t mem_type, size_t elem_size,
                std::vector<hsize_t> row_shape, int64_t rows, bool shuffle);
  Status append(const void* data, int64_t rows);
  Status flush();
  Status close();
  bool valid() const { return m_dataset.valid(); }

 private:
  Handle m_dataset;
  hid_t m_mem_type = H5I_INVALID_HID;
  std::vector<hsize_t> m_row_shape;
  size_t m_row_bytes = 0;
  int64_t m_rows = 0;
  int64_t m_chunk_rows = 1;
  int64_t m_written = 0;  // rows flushed to the dataset
  std::vector<uint8_t> m_buffer;
  int64_t m_buffered = 0;
};

// One HDF5 data file (part, shard or merged output): `images` via H5Dwrite_chunk, small datasets buffered.
class DataFile {
 public:
  DataFile() = default;
  ~DataFile() { abandon(); }
  DataFile(DataFile&&) noexcept = default;
  DataFile& operator=(DataFile&&) noexcept = default;

  // zstd datasets declare HDF5's Fletcher-32 filter after zstd (the encoder appends its trailer), unless
  // `fletcher32` is false: a merge of files written before kiln added it keeps their pipeline.
  Status create(const std::string& path, const DatasetLayout& layout, const FileAttributes& attributes,
                Compression compression, int32_t level, bool fletcher32 = true);
  // Where image_write put a chunk, and the CRC-32 of its bytes.
  struct StoredChunk {
    uint64_t address = 0;
    uint32_t crc = 0;
  };
  // Stores one already-encoded image (one chunk) at `row` (0-based within this file); fills *stored when asked.
  Status image_write(int64_t row, const void* data, size_t size, uint32_t filter_mask = 0,
                     StoredChunk* stored = nullptr);
  // Appends metadata rows in order: sequences (rows * seq_len * seq_channels), index, labels (may be null).
  Status rows_append(const float* sequences, const int64_t* index, const int8_t* labels, int64_t rows);
  // A part of a single-file run (created with attributes.images_file naming the draft): notes that image `row` is
  // the chunk of `size` bytes the draft stored as `stored`.
  Status image_ref_write(int64_t row, size_t size, uint32_t filter_mask, const StoredChunk& stored);
  // Flushes, sets complete=1 when asked, closes every handle.
  Status close(bool complete);
  // Waits until what has reached the file so far is on the disk (fdatasync).
  Status data_sync();
  void abandon();  // closes handles ignoring errors (the file stays incomplete)
  bool is_open() const { return m_file.valid(); }
  const std::string& path() const { return m_path; }
  int64_t count() const { return m_count; }
  int64_t rows() const { return m_rows; }  // metadata rows appended so far
  bool fletcher32() const { return m_fletcher32; }
  uint64_t image_bytes() const { return m_image_bytes; }
  std::string checksum() const { return m_checksum.text(m_has_labels); }  // of what was written so far

 private:
  Result<int> descriptor() const;  // the sec2 driver's file descriptor
  Status image_refs_close();       // writes image_refs, checking every row was written
  Result<uint64_t> image_address(int64_t row) const;  // by a search of the chunk index: O(chunks) in HDF5 1.10

  std::string m_path;
  ContentChecksum m_checksum;
  bool m_has_labels = false;
  Handle m_file;
  Handle m_images;
  RowWriter m_sequences;
  RowWriter m_index;
  RowWriter m_labels;
  int64_t m_count = 0;
  int64_t m_rows = 0;
  bool m_fletcher32 = false;
  int64_t m_seq_row = 0;  // floats per sequences row
  uint64_t m_image_bytes = 0;
  bool m_images_elsewhere = false;
  std::vector<uint64_t> m_refs;  // images_elsewhere: per row {address, size, filter mask}; size 0 until written
};

// A part's image_refs: {address, size, filter mask} per row, `count` rows.
Result<std::vector<uint64_t>> image_refs_read(hid_t file, int64_t count);

// Reads the stored image chunks of a data file: from its `images`, or for a part whose images lie in the run's draft,
// from the draft at the addresses the part records.
class ChunkReader {
 public:
  static Result<ChunkReader> open(hid_t file, const std::string& path, const FileAttributes& attributes);
  Status read(int64_t row, std::vector<uint8_t>* chunk, uint32_t* filter_mask);

 private:
  std::string m_path;
  Handle m_images;
  std::string m_draft;
  int m_draft_fd = -1;
  std::unique_ptr<FdCloser> m_draft_closer;
  std::vector<uint64_t> m_refs;
};

// ---- joining files ---------------------------------------------------------------------------------------------

// "zstd-1" -> {kZstd, 1}; the inverse of compression_label.
Result<std::pair<Compression, int32_t>> compression_from_label(const std::string& label);
// Writes `out` (as .tmp, then committed) holding the rows of `sources` in order: complete data files whose
// first_index values continue each other from attributes.first_index and whose counts add up to attributes.count.
// Image chunks are copied without recompressing; each source's checksum is checked as it is copied (IoError
// naming a damaged source, and nothing is committed).
Status files_concat(const std::string& out, const std::vector<std::string>& sources, const DatasetLayout& layout,
                    const FileAttributes& attributes);
// Appends the rows of `sources` to `merged` from its row `first_row` on, the same way (their first_index values must
// continue from first_index + first_row); where each image went in `merged` is appended to *stored when given.
Status files_append(DataFile& merged, const std::vector<std::string>& sources, const DatasetLayout& layout,
                    int64_t first_index, int64_t first_row, std::vector<DataFile::StoredChunk>* stored = nullptr);
// Commits `part` again (.tmp, fsync, rename) pointing at its images' copies in `draft` (stored: one per row, from
// files_append); its rows and checksum stay the same. A part that holds its images itself is left as it is.
Status part_repoint(const std::string& part, const DataFile& draft, const DataFile::StoredChunk* stored,
                    const DatasetLayout& layout);

}  // namespace kiln::hdf5
