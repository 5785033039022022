// NPY sink: one (N, H, W) array, dtype |u1 or <f4, NPY format v1.0. Written to `out.npy.tmp` (header, then
// every image pwritten at its fixed offset), committed every kCommitImages images through the sidecar
// `out.npy.progress`, renamed to `out.npy` at finish. `out.index.csv` carries image,start_row,label.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/render/sink_records.h"
#include "io/durable_file.h"
#include "apps/render/image_sink.h"
#include "io/npy_format.h"

namespace kiln {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int64_t kCommitImages = 4096;  // images between fdatasync + progress update


// Raw copy of one packed image, checked against the array's dtype and shape.
class NpyImageEncoder final : public ImageEncoder {
 public:
  explicit NpyImageEncoder(const DatasetLayout& layout) : m_layout(layout) {}
  Status encode(const ImageView& image, std::vector<uint8_t>& out) override {
    if (image.type != m_layout.dtype)
      return invalid_argument(fmt::format("npy: image is {}, array is {}", pixel_type_name(image.type),
                                          pixel_type_name(m_layout.dtype)));
    if (image.channels != m_layout.channels ||
        (m_layout.width > 0 && (image.width != m_layout.width || image.height != m_layout.height)))
      return invalid_argument(fmt::format("npy: image is {}x{}x{}, array expects {}x{}x{}", image.height, image.width,
                                          image.channels, m_layout.height, m_layout.width, m_layout.channels));
    if (image.data == nullptr) return invalid_argument("npy: empty image");
    const size_t row_bytes = static_cast<size_t>(image.width) * image.pixel_size();
    // Appended row by row (insert copies once; resize would zero the bytes first).
    if (image.is_packed()) {
      const auto* bytes = static_cast<const uint8_t*>(image.data);
      out.insert(out.end(), bytes, bytes + row_bytes * static_cast<size_t>(image.height));
    } else {
      for (int32_t y = 0; y < image.height; ++y) {
        const auto* row = image.row<const uint8_t>(y);
        out.insert(out.end(), row, row + row_bytes);
      }
    }
    return Status::ok();
  }

 private:
  DatasetLayout m_layout;
};

class NpySink final : public ImageSink {
 public:
  explicit NpySink(OutputSpec spec) : m_spec(std::move(spec)) {
    m_path = m_spec.path;
    m_tmp_path = m_path + ".tmp";
    m_progress_path = m_path + ".progress";
    const std::string stem =
        m_path.size() > 4 && m_path.compare(m_path.size() - 4, 4, ".npy") == 0 ? m_path.substr(0, m_path.size() - 4)
                                                                               : m_path;
    m_index_path = stem + ".index.csv";
  }
  ~NpySink() override {
    if (m_fd >= 0) ::close(m_fd);
  }

  Result<int64_t> open(const DatasetLayout& layout, const DatasetAttributes& attributes) override;
  std::unique_ptr<ImageEncoder> make_encoder() override { return std::make_unique<NpyImageEncoder>(m_layout); }
  Status write(const EncodedBatch& batch) override;
  Status finish(const std::string& run_report, int64_t fallbacks) override;
  uint64_t bytes_written() const override { return m_bytes; }
  std::string describe() const override {
    return fmt::format("{} (npy, {}, 1 file)", m_path, pixel_type_name(m_layout.dtype));
  }

 private:
  int64_t image_bytes() const {
    return static_cast<int64_t>(m_layout.width) * m_layout.height * m_layout.channels *
           static_cast<int64_t>(pixel_type_size(m_layout.dtype));
  }
  int64_t data_bytes() const { return static_cast<int64_t>(m_header.size()) + m_layout.total * image_bytes(); }
  Status remove_outputs(bool including_final);
  Status start_fresh();
  Result<int64_t> try_resume(bool& resumable);
  Status check_array_file(int fd, const std::string& path) const;
  Status commit();

  OutputSpec m_spec;
  std::string m_path;
  std::string m_tmp_path;
  std::string m_progress_path;
  std::string m_index_path;
  DatasetLayout m_layout;
  json m_job;
  std::string m_header;
  int m_fd = -1;  // out.npy.tmp
  IndexCsv m_index;
  int64_t m_next = 0;
  int64_t m_committed = 0;
  bool m_open = false;
  bool m_complete = false;
  uint64_t m_bytes = 0;
};

Status NpySink::remove_outputs(bool including_final) {
  std::vector<std::string> paths = {m_tmp_path, m_progress_path, m_progress_path + ".tmp", m_index_path};
  if (including_final) paths.push_back(m_path);
  for (const std::string& path : paths) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno_status(path + ": cannot remove");
  }
  return Status::ok();
}

Status NpySink::check_array_file(int fd, const std::string& path) const {
  std::string head(m_header.size(), '\0');
  const ssize_t n = ::pread(fd, head.data(), head.size(), 0);
  struct stat st{};
  if (n != static_cast<ssize_t>(head.size()) || head != m_header || ::fstat(fd, &st) != 0 ||
      st.st_size != data_bytes())
    return invalid_argument(path + " holds a different array (dtype or shape); use --overwrite to replace it");
  return Status::ok();
}

Status NpySink::commit() {
  if (::fdatasync(m_fd) != 0) return errno_status(m_tmp_path + ": fdatasync failed");
  KILN_TRY(m_index.sync());
  json progress = m_job;
  progress["images_done"] = m_next;
  KILN_TRY(file_write_atomic(m_progress_path, progress.dump(2) + "\n", TempName::kFixed));
  m_committed = m_next;
  return Status::ok();
}

Status NpySink::start_fresh() {
  KILN_TRY(remove_outputs(/*including_final=*/true));
  m_fd = ::open(m_tmp_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (m_fd < 0) return errno_status(m_tmp_path + ": cannot create");
  KILN_TRY(fd_pwrite_all(m_fd, m_header.data(), m_header.size(), 0, m_tmp_path));
  // Full size up front (sparse): each image is pwritten at its offset, the file is valid NPY from the start.
  if (::ftruncate(m_fd, static_cast<off_t>(data_bytes())) != 0) return errno_status(m_tmp_path + ": resize failed");
  m_bytes += m_header.size();
  KILN_TRY(m_index.create(m_index_path));
  m_next = 0;
  return commit();  // a progress file from the start: a crash before the first 4096 images resumes at 0
}

Result<int64_t> NpySink::try_resume(bool& resumable) {
  resumable = false;
  std::error_code ec;
  if (fs::exists(m_path, ec)) {
    // A finished array: nothing left to do when it is the same shape and dtype.
    const int fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_status(m_path + ": cannot open");
    const Status st = check_array_file(fd, m_path);
    ::close(fd);
    KILN_TRY(st);
    resumable = true;
    m_complete = true;
    return m_layout.total;
  }
  if (!fs::exists(m_tmp_path, ec) || !fs::exists(m_progress_path, ec)) return int64_t{0};
  KILN_TRY_ASSIGN(const std::string text, file_read_text(m_progress_path));
  const json progress = json::parse(text, nullptr, /*allow_exceptions=*/false);
  const std::string diff = job_json_diff(progress, m_job, {"images_done"});
  if (!diff.empty())
    return invalid_argument(m_tmp_path + " was written by a different job: " + diff +
                            " differs; use --overwrite to replace it");
  const json* done_json = progress.contains("images_done") ? &progress.at("images_done") : nullptr;
  if (done_json == nullptr || !done_json->is_number_integer()) return invalid_argument(m_progress_path + ": no images_done");
  const int64_t done = std::clamp<int64_t>(done_json->get<int64_t>(), 0, m_layout.total);

  m_fd = ::open(m_tmp_path.c_str(), O_RDWR | O_CLOEXEC);
  if (m_fd < 0) return errno_status(m_tmp_path + ": cannot open");
  KILN_TRY(check_array_file(m_fd, m_tmp_path));
  resumable = true;
  KILN_TRY_ASSIGN(const int64_t kept, m_index.open_resume(m_index_path, done));
  m_next = kept;
  m_committed = kept;
  return kept;
}

Result<int64_t> NpySink::open(const DatasetLayout& layout, const DatasetAttributes& attributes) {
  if (m_open) return invalid_argument(m_path + ": sink already open");
  if (layout.width <= 0 || layout.height <= 0 || layout.total < 0)
    return invalid_argument("npy sink: bad layout (width, height and total must be positive)");
  m_layout = layout;
  m_job = job_json_make(OutputFormat::kNpy, layout, attributes, /*complete=*/false);
  m_job["index"] = fs::path(m_index_path).filename().string();
  // (N, H, W), or (N, H, W, 3) for colour images.
  std::vector<int64_t> shape{layout.total, layout.height, layout.width};
  if (layout.channels > 1) shape.push_back(layout.channels);
  m_header = npy_header(layout.dtype, shape);
  if (m_header.empty()) return invalid_argument("npy: header too long");

  std::error_code ec;
  bool existing = false;
  for (const std::string& path : {m_path, m_tmp_path, m_progress_path, m_index_path})
    existing = existing || fs::exists(path, ec);
  if (fs::is_directory(m_path, ec)) return invalid_argument(m_path + " is a folder; NPY output is one file");
  if (existing && !m_spec.overwrite && !m_spec.resume)
    return invalid_argument(m_path + " exists (use --resume to continue or --overwrite to replace)");
  const std::string parent = path_parent(m_path);
  fs::create_directories(parent, ec);
  if (ec) return io_error(parent + ": cannot create folder: " + ec.message());

  int64_t done = 0;
  bool resumable = false;
  if (existing && m_spec.resume) {
    auto resumed = try_resume(resumable);
    // With --overwrite too, an output that cannot be continued is replaced instead of refused.
    if (!resumed.is_ok() && !(m_spec.overwrite && resumed.status().code() == Errc::kInvalidArgument))
      return resumed.status();
    if (resumed.is_ok()) {
      done = resumed.value();
    } else {
      resumable = false;
    }
  }
  if (!resumable) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
    KILN_TRY(start_fresh());
    done = 0;
  }
  m_open = true;
  return done;
}

Status NpySink::write(const EncodedBatch& batch) {
  if (!m_open) return invalid_argument(m_path + ": write before open");
  if (m_complete) return invalid_argument(m_path + ": write after the output was complete");
  if (batch.first != m_next)
    return invalid_argument(fmt::format("{}: batch starts at image {}, expected {}", m_path, batch.first, m_next));
  const size_t count = static_cast<size_t>(batch.count);
  if (batch.count < 0 || batch.first + batch.count > m_layout.total)
    return invalid_argument(fmt::format("{}: batch overruns the job's {} images", m_path, m_layout.total));
  if (batch.offsets.size() != count + 1 || batch.index.size() != count ||
      (m_layout.has_labels ? batch.labels.size() != count : !batch.labels.empty()) ||
      batch.offsets[count] > batch.bytes.size())
    return invalid_argument(m_path + ": inconsistent EncodedBatch");
  const uint64_t bytes_per_image = static_cast<uint64_t>(image_bytes());
  for (size_t k = 0; k < count; ++k) {
    if (batch.offsets[k + 1] - batch.offsets[k] != bytes_per_image || batch.offsets[k + 1] < batch.offsets[k])
      return invalid_argument(m_path + ": encoded image has the wrong size for the array");
  }
  // Consecutive ordinals are consecutive in the file: one pwrite for the whole batch.
  const int64_t offset = static_cast<int64_t>(m_header.size()) + batch.first * image_bytes();
  const size_t size = static_cast<size_t>(batch.offsets[count] - batch.offsets[0]);
  KILN_TRY(fd_pwrite_all(m_fd, batch.bytes.data() + batch.offsets[0], size, offset, m_tmp_path));
  m_bytes += size;
  KILN_TRY(m_index.append(batch, [](int64_t ordinal) { return std::to_string(ordinal); }));
  m_next += batch.count;
  if (m_next - m_committed >= kCommitImages) KILN_TRY(commit());
  return Status::ok();
}

// NPY has no place for attributes: the run report is only printed by the caller.
Status NpySink::finish(const std::string& /*run_report*/, int64_t /*fallbacks*/) {
  if (!m_open) return invalid_argument(m_path + ": finish before open");
  if (m_complete) return Status::ok();
  if (m_next != m_layout.total)
    return invalid_argument(fmt::format("{}: finish after {} of {} images", m_path, m_next, m_layout.total));
  KILN_TRY(m_index.sync());
  if (::fsync(m_fd) != 0) return errno_status(m_tmp_path + ": fsync failed");
  if (::close(m_fd) != 0) {
    m_fd = -1;
    return errno_status(m_tmp_path + ": close failed");
  }
  m_fd = -1;
  if (::rename(m_tmp_path.c_str(), m_path.c_str()) != 0) return errno_status(m_path + ": rename failed");
  KILN_TRY(dir_fsync(path_parent(m_path)));
  if (::unlink(m_progress_path.c_str()) != 0 && errno != ENOENT) return errno_status(m_progress_path + ": cannot remove");
  KILN_TRY(dir_fsync(path_parent(m_path)));
  m_index.reset();
  m_complete = true;
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<ImageSink>> npy_sink_create(const OutputSpec& spec) {
  if (spec.path.empty()) return invalid_argument("no output path given");
  return std::unique_ptr<ImageSink>(std::make_unique<NpySink>(spec));
}

}  // namespace kiln
