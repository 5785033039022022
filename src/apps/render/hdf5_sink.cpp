// HDF5 ImageSink: images compressed by per-thread encoders, stored by one writer thread with H5Dwrite_chunk.
//
// Single-file mode (images_per_file == 0): parts of kPartImages images in {out}.parts/part_NNNNN.h5, each
// committed (.tmp -> complete=1 -> close -> fsync -> rename). With more than one part the images are written once,
// into the draft {out}.parts/draft_NNNN.h5, and each part records where its images lie, committed after the draft's
// bytes are on disk; finish() only completes the draft and renames it to {out}. A resumed run starts the next draft
// with copies of the kept parts' images, points those parts at it and deletes the older drafts. One part is the whole
// output itself.
// Shard mode (images_per_file = N): shards {stem}_batch_NNNN.h5 committed the same way; finish() verifies them
// and writes the manifest and the VDS {out} (hdf5_vds_build). Resume keeps the leading committed files.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>

#include "apps/render/hdf5_encoder.h"
#include "apps/render/hdf5_dataset.h"
#include "apps/render/hdf5_image_table.h"
#include "apps/render/hdf5_vds.h"
#include "io/hdf5_zstd_register.h"
#include "apps/render/image_sink.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

bool path_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

Status path_remove(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) return io_error("cannot remove " + path + ": " + ec.message());
  return Status::ok();
}

class Hdf5Sink final : public ImageSink {
 public:
  explicit Hdf5Sink(OutputSpec spec) : m_spec(std::move(spec)) {}
  ~Hdf5Sink() override;

  Result<int64_t> open(const DatasetLayout& layout, const DatasetAttributes& attributes) override;
  std::unique_ptr<ImageEncoder> make_encoder() override;
  Status write(const EncodedBatch& batch) override;
  Status finish(const std::string& run_report, int64_t fallbacks) override;
  uint64_t bytes_written() const override { return m_bytes.load(std::memory_order_relaxed); }
  std::string describe() const override;
  std::vector<std::string> resume_notes() const override { return m_notes; }
  void image_table_set(std::shared_ptr<const ImageTable> table) override { m_table = std::move(table); }

 private:
  bool shard_mode() const { return m_spec.images_per_file > 0; }
  std::string unit_path(int64_t k) const {
    return shard_mode() ? hdf5::shard_path(m_spec.path, k) : hdf5::part_path(m_spec.path, k);
  }
  int64_t unit_first(int64_t k) const { return k * m_unit; }
  int64_t unit_count(int64_t k) const { return std::max<int64_t>(0, std::min(m_unit, m_layout.total - k * m_unit)); }

  Status layout_check(const DatasetLayout& layout) const;
  std::vector<std::string> artifacts() const;  // everything an earlier run may have left
  Result<int64_t> resume_scan();
  Status unit_open(int64_t k);
  Status unit_commit();
  Status parts_merge();
  bool merged_as_written() const { return !shard_mode() && m_units > 1; }
  Status merged_open();

  OutputSpec m_spec;
  DatasetLayout m_layout;
  hdf5::FileAttributes m_attributes;  // template for every file; count/first_index set per file
  bool m_opened = false;
  bool m_done = false;      // the final output already exists complete (resume); finish() is a no-op
  bool m_finished = false;
  int64_t m_unit = hdf5::kPartImages;
  int64_t m_units = 1;
  int64_t m_next = 0;       // next image ordinal expected by write()
  int64_t m_committed = 0;  // leading units durable under their final name
  hdf5::DataFile m_current;
  int64_t m_current_unit = -1;
  hdf5::DataFile m_merged;  // the draft in single-file mode
  std::atomic<uint64_t> m_bytes{0};
  std::vector<std::string> m_notes;
  std::shared_ptr<const ImageTable> m_table;  // a panel's, written into the final file before it is renamed
};

Hdf5Sink::~Hdf5Sink() {
  // Without finish() the open files are abandoned: a .tmp is incomplete and never becomes visible; the draft holds
  // the images of the committed parts, for --resume.
  hdf5::ErrorScope quiet;
  m_merged.abandon();
  if (!m_current.is_open()) return;
  const std::string tmp = m_current.path();
  m_current.abandon();
  std::error_code ec;
  fs::remove(tmp, ec);
}

Status Hdf5Sink::layout_check(const DatasetLayout& layout) const {
  if (layout.total < 0) return invalid_argument("negative image count");
  if (layout.width <= 0 || layout.height <= 0) return invalid_argument("HDF5 output needs a positive image size");
  if (layout.channels != 1 && layout.channels != 3) return invalid_argument("HDF5 images have 1 or 3 channels");
  if (layout.seq_len <= 0) return invalid_argument("HDF5 output needs seq_len >= 1");
  if (layout.seq_channels != 1 && layout.seq_channels != 4) return invalid_argument("seq_channels must be 1 or 4");
  if (m_spec.images_per_file < 0) return invalid_argument("images_per_file must be >= 0");
  if (layout.shard_count > 0 && m_spec.images_per_file > 0) {
    return invalid_argument("a piece of a sharded job is one file: --images-per-file does not apply with --shard");
  }
  if (layout.first_index < 0 || (layout.job_total > 0 && layout.first_index + layout.total > layout.job_total)) {
    return invalid_argument("the output's images do not lie within the job's");
  }
  return hdf5_compression_level_check(m_spec.compression, m_spec.compression_level);
}

std::vector<std::string> Hdf5Sink::artifacts() const {
  std::vector<std::string> found;
  const std::string candidates[] = {m_spec.path, m_spec.path + ".tmp", hdf5::parts_dir(m_spec.path),
                                    hdf5::manifest_path(m_spec.path), hdf5::manifest_path(m_spec.path) + ".tmp"};
  for (const std::string& c : candidates) {
    if (path_exists(c)) found.push_back(c);
  }
  for (const auto& [index, path] : hdf5::shards_list(m_spec.path)) found.push_back(path);
  // Stray shard .tmp files.
  for (int64_t k = 0;; ++k) {
    const std::string tmp = hdf5::shard_path(m_spec.path, k) + ".tmp";
    if (path_exists(tmp)) {
      found.push_back(tmp);
    } else if (!path_exists(hdf5::shard_path(m_spec.path, k))) {
      break;
    }
  }
  return found;
}

Result<int64_t> Hdf5Sink::open(const DatasetLayout& layout, const DatasetAttributes& attributes) {
  hdf5::ErrorScope quiet;
  if (m_opened) return invalid_argument("HDF5 sink opened twice");
  if (m_spec.overwrite && m_spec.resume) return invalid_argument("--resume and --overwrite exclude each other");
  KILN_TRY(layout_check(layout));
  KILN_TRY(hdf5_zstd_register());
  m_layout = layout;
  m_attributes.dataset = attributes;
  m_attributes.compression = hdf5::compression_label(m_spec.compression, m_spec.compression_level);
  m_attributes.total = layout.job_total > 0 ? layout.job_total : layout.total;
  m_attributes.images_per_file = m_spec.images_per_file;
  m_attributes.shard_index = layout.shard_index;
  m_attributes.shard_count = layout.shard_count;
  m_unit = shard_mode() ? m_spec.images_per_file : hdf5::kPartImages;
  m_units = std::max<int64_t>(1, (layout.total + m_unit - 1) / m_unit);

  const fs::path parent = fs::path(m_spec.path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) return io_error("cannot create " + parent.string() + ": " + ec.message());
  }

  const std::vector<std::string> existing = artifacts();
  int64_t start = 0;
  if (!existing.empty()) {
    if (m_spec.overwrite) {
      for (const std::string& path : existing) KILN_TRY(path_remove(path));
    } else if (m_spec.resume) {
      KILN_TRY_ASSIGN(start, resume_scan());
    } else {
      return invalid_argument(existing.front() + " exists (use --resume to continue or --overwrite to replace)");
    }
  }
  m_next = start;
  m_opened = true;
  return start;
}

Result<int64_t> Hdf5Sink::resume_scan() {
  const std::string& out = m_spec.path;
  // Stray temporaries are never complete.
  for (const std::string& tmp : {out + ".tmp", hdf5::manifest_path(out) + ".tmp"}) KILN_TRY(path_remove(tmp));
  std::error_code ec;
  if (fs::is_directory(hdf5::parts_dir(out), ec)) {
    for (const auto& entry : fs::directory_iterator(hdf5::parts_dir(out), ec)) {
      if (entry.path().extension() == ".tmp") KILN_TRY(path_remove(entry.path().string()));
    }
  }
  const fs::path shard_dir = fs::path(out).parent_path().empty() ? fs::path(".") : fs::path(out).parent_path();
  const std::string shard_prefix = fs::path(hdf5::shard_path(out, 0)).stem().string();
  const std::string shard_stem = shard_prefix.substr(0, shard_prefix.size() - 4);  // "{stem}_batch_"
  for (const auto& entry : fs::directory_iterator(shard_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0 && name.rfind(shard_stem, 0) == 0) {
      KILN_TRY(path_remove(entry.path().string()));
    }
  }

  auto mismatch = [&](const std::string& path, const std::string& diff) {
    return invalid_argument("cannot resume: " + path + " was made with different settings (" + diff +
                            "); use --overwrite to replace it");
  };

  if (!shard_mode() && path_exists(out)) {
    // A finished single file: nothing to do if it belongs to this job (and is intact).
    if (const Status intact = hdf5::checksum_verify_isolated(out); !intact.is_ok()) {
      return io_error("cannot resume: " + intact.message() + "; use --overwrite to render it again");
    }
    KILN_TRY_ASSIGN(hdf5::FileSummary summary, hdf5::file_summary_read(out));
    const std::string diff = hdf5::settings_diff(summary.attributes, summary.shape, m_attributes, m_layout);
    if (!diff.empty()) return mismatch(out, diff);
    if (!summary.attributes.complete || summary.shape.is_virtual || summary.shape.count != m_layout.total) {
      return invalid_argument("cannot resume: " + out + " is not a complete single-file output; use --overwrite");
    }
    KILN_TRY(path_remove(hdf5::parts_dir(out)));
    m_done = true;
    m_committed = m_units;
    m_bytes = summary.image_bytes;
    return m_layout.total;
  }

  if (shard_mode() && path_exists(out)) {
    // An earlier VDS: it must belong to this job (it is rebuilt by finish()).
    if (const Status sound = hdf5::checksum_verify_isolated(out); !sound.is_ok()) {
      return invalid_argument("cannot resume: " + sound.message() + "; use --overwrite to replace it");
    }
    auto summary = hdf5::file_summary_read(out);
    if (!summary.is_ok()) {
      return invalid_argument("cannot resume: " + summary.status().message() + "; use --overwrite to replace it");
    }
    const std::string diff = hdf5::settings_diff(summary->attributes, summary->shape, m_attributes, m_layout);
    if (!diff.empty()) return mismatch(out, diff);
  }

  int64_t kept = 0;
  uint64_t bytes = 0;
  std::vector<std::string> keep;  // file names in the parts folder
  for (; kept < m_units; ++kept) {
    const std::string path = unit_path(kept);
    if (!path_exists(path)) break;
    // Checked whole in a child first: a damaged file can crash libhdf5.
    if (const Status intact = hdf5::checksum_verify_isolated(path); !intact.is_ok()) {
      m_notes.push_back(intact.message() + "; rendering it again");
      break;
    }
    auto summary = hdf5::file_summary_read(path);
    if (!summary.is_ok()) break;  // unreadable: rewrite from here
    const hdf5::FileAttributes& a = summary->attributes;
    const std::string diff = hdf5::settings_diff(a, summary->shape, m_attributes, m_layout);
    if (!diff.empty()) return mismatch(path, diff);
    if (!a.complete || a.first_index != m_layout.first_index + unit_first(kept) || a.count != unit_count(kept) ||
        summary->shape.count != unit_count(kept)) {
      break;
    }
    bytes += summary->image_bytes;
    keep.push_back(fs::path(path).filename().string());
    if (!a.images_file.empty()) keep.push_back(a.images_file);
  }
  // Everything after the kept prefix is rewritten; stale files (and a stale VDS/manifest) go now.
  if (shard_mode()) {
    for (const auto& [index, path] : hdf5::shards_list(out)) {
      if (index >= kept) KILN_TRY(path_remove(path));
    }
    if (kept < m_units) {
      KILN_TRY(path_remove(out));
      KILN_TRY(path_remove(hdf5::manifest_path(out)));
    }
  } else if (fs::is_directory(hdf5::parts_dir(out), ec)) {
    for (const auto& entry : fs::directory_iterator(hdf5::parts_dir(out), ec)) {
      if (std::find(keep.begin(), keep.end(), entry.path().filename().string()) == keep.end()) {
        KILN_TRY(path_remove(entry.path().string()));
      }
    }
  }
  m_committed = kept;
  m_bytes = bytes;
  return std::min(m_layout.total, kept * m_unit);
}

std::unique_ptr<ImageEncoder> Hdf5Sink::make_encoder() {
  auto encoder = hdf5_encoder_create(m_spec.compression, m_spec.compression_level, m_layout.width, m_layout.height,
                                     m_layout.dtype, m_layout.channels);
  if (!encoder.is_ok()) return nullptr;  // level was validated in open()
  return std::move(encoder).value();
}

Status Hdf5Sink::unit_open(int64_t k) {
  if (!shard_mode() && !path_exists(hdf5::parts_dir(m_spec.path))) {
    std::error_code ec;
    fs::create_directories(hdf5::parts_dir(m_spec.path), ec);
    if (ec) return io_error("cannot create " + hdf5::parts_dir(m_spec.path) + ": " + ec.message());
    KILN_TRY(dir_fsync(fs::path(m_spec.path).parent_path().string()));  // the new folder's entry
  }
  if (merged_as_written() && !m_merged.is_open()) KILN_TRY(merged_open());
  hdf5::FileAttributes attributes = m_attributes;
  attributes.first_index = m_layout.first_index + unit_first(k);
  attributes.count = unit_count(k);
  attributes.complete = false;
  if (m_merged.is_open()) attributes.images_file = hdf5::file_name(m_merged.path());
  KILN_TRY(m_current.create(unit_path(k) + ".tmp", m_layout, attributes, m_spec.compression,
                            m_spec.compression_level));
  m_current_unit = k;
  return Status::ok();
}

Status Hdf5Sink::unit_commit() {
  const std::string tmp = m_current.path();
  KILN_TRY(m_current.close(true));
  KILN_TRY(file_commit(tmp, unit_path(m_current_unit)));
  m_committed = m_current_unit + 1;
  m_current_unit = -1;
  return Status::ok();
}

Status Hdf5Sink::merged_open() {
  hdf5::FileAttributes attributes = m_attributes;
  attributes.first_index = m_layout.first_index;
  attributes.count = m_layout.total;
  attributes.complete = false;
  const auto drafts = hdf5::drafts_list(m_spec.path);
  const int64_t generation = drafts.empty() ? 0 : drafts.back().first + 1;
  KILN_TRY(m_merged.create(hdf5::draft_path(m_spec.path, generation), m_layout, attributes, m_spec.compression,
                           m_spec.compression_level));
  std::vector<std::string> kept;
  for (int64_t k = 0; k < m_committed; ++k) kept.push_back(unit_path(k));
  std::vector<hdf5::DataFile::StoredChunk> stored;
  KILN_TRY(hdf5::files_append(m_merged, kept, m_layout, m_layout.first_index, 0, &stored));
  if (drafts.empty()) return Status::ok();
  // The kept parts move to the new draft (each committed again once its copies are on disk); then the older drafts,
  // which no part names any more, go: a run resumed many times holds one draft.
  KILN_TRY(m_merged.data_sync());
  for (int64_t k = 0; k < m_committed; ++k) {
    KILN_TRY(hdf5::part_repoint(unit_path(k), m_merged, stored.data() + unit_first(k), m_layout));
  }
  for (const auto& [old_generation, path] : drafts) KILN_TRY(path_remove(path));
  return dir_fsync(hdf5::parts_dir(m_spec.path));
}

Status Hdf5Sink::write(const EncodedBatch& batch) {
  hdf5::ErrorScope quiet;
  if (!m_opened) return invalid_argument("HDF5 sink written before open()");
  if (m_finished) return invalid_argument("HDF5 sink written after finish()");
  if (batch.count == 0) return Status::ok();
  if (batch.count < 0) return invalid_argument("negative batch count");
  if (batch.first != m_next) {
    return invalid_argument("batch starts at image " + std::to_string(batch.first) + ", expected " +
                            std::to_string(m_next) + " (batches must arrive in job order)");
  }
  const size_t n = static_cast<size_t>(batch.count);
  const size_t seq_row = static_cast<size_t>(m_layout.seq_len) * static_cast<size_t>(m_layout.seq_channels);
  if (m_next + batch.count > m_layout.total) return invalid_argument("batch goes past the job's image count");
  if (batch.offsets.size() != n + 1 || batch.offsets.back() > batch.bytes.size()) {
    return invalid_argument("batch offsets do not match its count/bytes");
  }
  if (batch.sequences.size() != n * seq_row) return invalid_argument("batch sequences have the wrong size");
  if (batch.index.size() != n) return invalid_argument("batch index has the wrong size");
  if (m_layout.has_labels && batch.labels.size() != n) return invalid_argument("batch labels have the wrong size");
  const size_t raw_bytes = static_cast<size_t>(m_layout.width) * static_cast<size_t>(m_layout.height) *
                           static_cast<size_t>(m_layout.channels) * pixel_type_size(m_layout.dtype);

  int64_t i = 0;
  while (i < batch.count) {
    const int64_t k = m_next / m_unit;
    if (!m_current.is_open()) KILN_TRY(unit_open(k));
    const int64_t first = unit_first(k);
    const int64_t take = std::min<int64_t>(batch.count - i, first + unit_count(k) - m_next);
    uint64_t bytes = 0;
    for (int64_t j = i; j < i + take; ++j) {
      const uint64_t begin = batch.offsets[static_cast<size_t>(j)];
      const uint64_t end = batch.offsets[static_cast<size_t>(j) + 1];
      if (end <= begin) return invalid_argument("image " + std::to_string(batch.first + j) + " has no bytes");
      if (m_spec.compression == Compression::kNone && end - begin != raw_bytes) {
        return invalid_argument("uncompressed image " + std::to_string(batch.first + j) + " has " +
                                std::to_string(end - begin) + " bytes, expected " + std::to_string(raw_bytes));
      }
      const uint8_t* image = batch.bytes.data() + begin;
      if (m_merged.is_open()) {
        hdf5::DataFile::StoredChunk stored;
        KILN_TRY(m_merged.image_write(batch.first + j, image, end - begin, 0, &stored));
        KILN_TRY(m_current.image_ref_write(batch.first + j - first, end - begin, 0, stored));
      } else {
        KILN_TRY(m_current.image_write(batch.first + j - first, image, end - begin));
      }
      bytes += end - begin;
    }
    const float* sequences = batch.sequences.data() + static_cast<size_t>(i) * seq_row;
    const int8_t* labels = m_layout.has_labels ? batch.labels.data() + i : nullptr;
    KILN_TRY(m_current.rows_append(sequences, batch.index.data() + i, labels, take));
    if (m_merged.is_open()) KILN_TRY(m_merged.rows_append(sequences, batch.index.data() + i, labels, take));
    m_bytes.fetch_add(bytes, std::memory_order_relaxed);
    m_next += take;
    i += take;
    if (m_next == first + unit_count(k)) {
      if (m_merged.is_open()) KILN_TRY(m_merged.data_sync());  // the part points into it
      KILN_TRY(unit_commit());
    }
  }
  return Status::ok();
}

Status Hdf5Sink::parts_merge() {
  const std::string& out = m_spec.path;
  for (int64_t k = 0; k < m_units; ++k) {
    if (!path_exists(unit_path(k))) {
      return io_error("part " + unit_path(k) + " is missing; rerun with --resume to write it again");
    }
  }
  if (m_units == 1) {
    // One part already is the whole dataset (count = total, first_index = 0): add the run report, rename it.
    KILN_TRY(hdf5::run_report_update(unit_path(0), m_attributes.dataset.run_report, m_attributes.dataset.fallbacks));
    if (m_table) KILN_TRY(hdf5::image_table_write(unit_path(0), *m_table));
    KILN_TRY(file_commit(unit_path(0), out));
    KILN_TRY(dir_fsync(hdf5::parts_dir(out)));
    return path_remove(hdf5::parts_dir(out));
  }
  if (!m_merged.is_open()) KILN_TRY(merged_open());  // a resumed run that had written every part
  if (m_merged.rows() != m_layout.total) {
    return io_error(m_merged.path() + " holds " + std::to_string(m_merged.rows()) + " images, expected " +
                    std::to_string(m_layout.total));
  }
  const std::string tmp = m_merged.path();
  KILN_TRY(m_merged.close(true));
  KILN_TRY(hdf5::run_report_update(tmp, m_attributes.dataset.run_report, m_attributes.dataset.fallbacks));
  if (m_table) KILN_TRY(hdf5::image_table_write(tmp, *m_table));
  KILN_TRY(file_commit(tmp, out));
  return path_remove(hdf5::parts_dir(out));
}

Status Hdf5Sink::finish(const std::string& run_report, int64_t fallbacks) {
  hdf5::ErrorScope quiet;
  m_attributes.dataset.run_report = run_report;
  m_attributes.dataset.fallbacks = fallbacks;
  if (!m_opened) return invalid_argument("HDF5 sink finished before open()");
  if (m_finished || m_done) {
    m_finished = true;
    return Status::ok();
  }
  if (m_next != m_layout.total) {
    return invalid_argument("HDF5 sink finished after " + std::to_string(m_next) + " of " +
                            std::to_string(m_layout.total) + " images");
  }
  // An empty job still gets its one (empty) file.
  while (m_committed < m_units) {
    KILN_TRY(unit_open(m_committed));
    KILN_TRY(unit_commit());
  }
  if (shard_mode()) {
    for (int64_t k = 0; k < m_units; ++k) {
      if (!path_exists(unit_path(k))) {
        return io_error("shard " + unit_path(k) + " is missing; rerun with --resume to write it again");
      }
    }
    KILN_TRY(hdf5_vds_build(m_spec.path, m_attributes.dataset.created_at, run_report, fallbacks));
    // The VDS file is small and rebuilt by every finishing run: the table is added to it in place.
    if (m_table) KILN_TRY(hdf5::image_table_write(m_spec.path, *m_table));
  } else {
    KILN_TRY(parts_merge());
  }
  m_finished = true;
  return Status::ok();
}

std::string Hdf5Sink::describe() const {
  const std::string label = hdf5::compression_label(m_spec.compression, m_spec.compression_level);
  const std::string units = std::to_string(m_units);
  if (shard_mode()) return m_spec.path + " (" + label + ", " + units + (m_units == 1 ? " shard" : " shards") + " + VDS)";
  return m_spec.path + " (" + label + ", " + units + (m_units == 1 ? " part)" : " parts)");
}

}  // namespace

Result<std::unique_ptr<ImageSink>> hdf5_sink_create(const OutputSpec& spec) {
  if (spec.path.empty()) return invalid_argument("no output path given");
  if (output_format_resolve(spec.format, spec.path) != OutputFormat::kHdf5) {
    return invalid_argument("hdf5_sink_create needs an HDF5 output spec");
  }
  if (spec.images_per_file < 0) return invalid_argument("images_per_file must be >= 0");
  KILN_TRY(hdf5_compression_level_check(spec.compression, spec.compression_level));
  KILN_TRY(hdf5_zstd_register());
  return std::unique_ptr<ImageSink>(std::make_unique<Hdf5Sink>(spec));
}

}  // namespace kiln
