#include "apps/render/image_folder_sink.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/render/sink_records.h"
#include "io/durable_file.h"

namespace kiln {

namespace fs = std::filesystem;
using nlohmann::json;

// --- folder sink ---

std::string image_file_name(int64_t ordinal, const std::string& extension) {
  return fmt::format("{}{:06d}.{}", kImageFilePrefix, ordinal, extension);
}

namespace {

constexpr const char* kIndexFile = "index.csv";
constexpr const char* kManifestFile = "manifest.json";
constexpr const char* kRunFile = "run.json";

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Files this sink owns in the folder (and may delete); nothing else is ever touched.
bool is_own_file(const std::string& name) {
  if (starts_with(name, kImageFilePrefix)) return true;
  for (const char* own : {kIndexFile, kManifestFile, kRunFile}) {
    if (name == own || name == std::string(own) + ".tmp") return true;
  }
  return false;
}

class ImageFolderSink final : public ImageSink {
 public:
  ImageFolderSink(OutputSpec spec, ImageFolderFormat format) : m_spec(std::move(spec)), m_format(std::move(format)) {
    m_dir = m_spec.path;
    while (m_dir.size() > 1 && m_dir.back() == '/') m_dir.pop_back();
  }
  ~ImageFolderSink() override {
    if (m_dir_fd >= 0) ::close(m_dir_fd);
  }

  Result<int64_t> open(const DatasetLayout& layout, const DatasetAttributes& attributes) override;
  std::unique_ptr<ImageEncoder> make_encoder() override { return m_format.encoder_create(); }
  Status write(const EncodedBatch& batch) override;
  Status finish(const std::string& run_report, int64_t fallbacks) override;
  uint64_t bytes_written() const override { return m_bytes; }
  std::string describe() const override {
    std::string text = m_dir + "/ (" + output_format_name(m_format.format);
    if (!m_format.detail.empty()) text += " " + m_format.detail;
    return text + ", 1 file per image)";
  }

 private:
  std::string file(const std::string& name) const { return m_dir + "/" + name; }
  Result<std::vector<std::string>> list_own_files() const;
  Status remove_own_files(bool tmp_only);
  Status start_fresh();
  Result<int64_t> try_resume(bool& resumable);
  Status open_dir();

  OutputSpec m_spec;
  ImageFolderFormat m_format;
  std::string m_dir;
  DatasetLayout m_layout;
  json m_job;  // run.json content for this job
  int m_dir_fd = -1;
  IndexCsv m_index;
  int64_t m_next = 0;  // ordinal the next batch must start at
  bool m_open = false;
  bool m_complete = false;
  uint64_t m_bytes = 0;
};

Result<std::vector<std::string>> ImageFolderSink::list_own_files() const {
  std::vector<std::string> names;
  DIR* dir = ::opendir(m_dir.c_str());
  if (dir == nullptr) return errno_status(m_dir + ": cannot list");
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (is_own_file(name)) names.push_back(name);
  }
  ::closedir(dir);
  return names;
}

Status ImageFolderSink::remove_own_files(bool tmp_only) {
  KILN_TRY_ASSIGN(const std::vector<std::string> names, list_own_files());
  for (const std::string& name : names) {
    if (tmp_only && !ends_with(name, ".tmp")) continue;
    if (::unlink(file(name).c_str()) != 0 && errno != ENOENT) return errno_status(file(name) + ": cannot remove");
  }
  return Status::ok();
}

Status ImageFolderSink::open_dir() {
  if (m_dir_fd >= 0) ::close(m_dir_fd);
  m_dir_fd = ::open(m_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (m_dir_fd < 0) return errno_status(m_dir + ": cannot open folder");
  return Status::ok();
}

Status ImageFolderSink::start_fresh() {
  KILN_TRY(remove_own_files(false));
  KILN_TRY(file_write_atomic(file(kRunFile), m_job.dump(2) + "\n", TempName::kFixed));
  KILN_TRY(m_index.create(file(kIndexFile)));
  m_next = 0;
  return Status::ok();
}

// Continues the job found in the folder. Sets `resumable` false when the folder holds no run of this sink.
Result<int64_t> ImageFolderSink::try_resume(bool& resumable) {
  resumable = false;
  std::error_code ec;
  if (fs::exists(file(kManifestFile), ec)) {
    KILN_TRY_ASSIGN(const std::string text, file_read_text(file(kManifestFile)));
    const json manifest = json::parse(text, nullptr, /*allow_exceptions=*/false);
    const std::string diff = job_json_diff(manifest, m_job);
    if (!diff.empty() || !manifest.value("complete", false)) {
      return invalid_argument(m_dir + "/ holds a different job (" + (diff.empty() ? "incomplete manifest" : diff) +
                              "); use --overwrite to replace it");
    }
    resumable = true;
    m_complete = true;
    return m_layout.total;
  }
  if (!fs::exists(file(kRunFile), ec)) {
    KILN_TRY_ASSIGN(const std::vector<std::string> names, list_own_files());
    if (names.empty()) return int64_t{0};  // nothing of ours: a fresh start
    return invalid_argument(m_dir + "/ has images but no run.json to resume from; use --overwrite to replace it");
  }
  KILN_TRY_ASSIGN(const std::string text, file_read_text(file(kRunFile)));
  const json stored = json::parse(text, nullptr, /*allow_exceptions=*/false);
  const std::string diff = job_json_diff(stored, m_job);
  if (!diff.empty()) {
    return invalid_argument(m_dir + "/ was written by a different job: " + diff +
                            " differs; use --overwrite to replace it");
  }
  resumable = true;
  KILN_TRY(remove_own_files(/*tmp_only=*/true));
  // The images are renamed into place only when complete, so the leading run of non-empty files is durable
  // enough to continue from; index.csv rows are appended after their images and bound it too.
  int64_t run = 0;
  while (run < m_layout.total) {
    struct stat st{};
    const std::string name = image_file_name(run, m_format.extension);
    if (::fstatat(m_dir_fd, name.c_str(), &st, 0) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) break;
    ++run;
  }
  KILN_TRY_ASSIGN(const int64_t kept, m_index.open_resume(file(kIndexFile), run));
  // Refresh run.json so created_at and the description track this run.
  KILN_TRY(file_write_atomic(file(kRunFile), m_job.dump(2) + "\n", TempName::kFixed));
  m_next = kept;
  return kept;
}

Result<int64_t> ImageFolderSink::open(const DatasetLayout& layout, const DatasetAttributes& attributes) {
  if (m_open) return invalid_argument(m_dir + ": sink already open");
  if (layout.dtype != PixelType::kU8) {
    return unsupported_format("PNG/JPEG store uint8 images; use --dtype uint8 or HDF5/NPY");
  }
  if (layout.width <= 0 || layout.height <= 0 || layout.total < 0)
    return invalid_argument("image folder sink: bad layout (width, height and total must be positive)");
  m_layout = layout;
  m_job = job_json_make(m_format.format, layout, attributes, /*complete=*/false);
  m_job["file_pattern"] = std::string(kImageFilePrefix) + "{:06d}." + m_format.extension;
  m_job["index"] = kIndexFile;

  std::error_code ec;
  const fs::file_status st = fs::status(m_dir, ec);
  const bool exists = fs::exists(st);
  if (exists && !fs::is_directory(st)) return invalid_argument(m_dir + " exists and is not a folder");
  const bool non_empty = exists && !fs::is_empty(m_dir, ec);
  if (non_empty && !m_spec.overwrite && !m_spec.resume)
    return invalid_argument(m_dir + "/ exists (use --resume to continue or --overwrite to replace)");
  if (!exists) {
    fs::create_directories(m_dir, ec);
    if (ec) return io_error(m_dir + ": cannot create folder: " + ec.message());
  }
  KILN_TRY(open_dir());

  int64_t done = 0;
  bool resumable = false;
  if (non_empty && m_spec.resume) {
    auto resumed = try_resume(resumable);
    // With --overwrite too, a folder that cannot be continued is replaced instead of refused.
    if (!resumed.is_ok() && !(m_spec.overwrite && resumed.status().code() == Errc::kInvalidArgument))
      return resumed.status();
    if (resumed.is_ok()) done = resumed.value();
    if (!resumed.is_ok()) resumable = false;
  }
  if (!resumable) {
    KILN_TRY(start_fresh());
    done = 0;
  }
  m_open = true;
  return done;
}

Status ImageFolderSink::write(const EncodedBatch& batch) {
  if (!m_open) return invalid_argument(m_dir + ": write before open");
  if (m_complete) return invalid_argument(m_dir + ": write after the output was complete");
  if (batch.first != m_next)
    return invalid_argument(fmt::format("{}: batch starts at image {}, expected {}", m_dir, batch.first, m_next));
  const size_t count = static_cast<size_t>(batch.count);
  if (batch.count < 0 || batch.first + batch.count > m_layout.total)
    return invalid_argument(fmt::format("{}: batch overruns the job's {} images", m_dir, m_layout.total));
  if (batch.offsets.size() != count + 1 || batch.index.size() != count ||
      (m_layout.has_labels ? batch.labels.size() != count : !batch.labels.empty()) ||
      batch.offsets[count] > batch.bytes.size())
    return invalid_argument(m_dir + ": inconsistent EncodedBatch");

  for (size_t k = 0; k < count; ++k) {
    const uint64_t begin = batch.offsets[k];
    const uint64_t end = batch.offsets[k + 1];
    if (end <= begin) return invalid_argument(m_dir + ": empty or negative-size encoded image");
    const std::string name = image_file_name(batch.first + static_cast<int64_t>(k), m_format.extension);
    const std::string tmp = name + ".tmp";
    const int fd = ::openat(m_dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno_status(file(tmp) + ": cannot create");
    FdCloser closer(fd);
    KILN_TRY(fd_write_all(fd, batch.bytes.data() + begin, end - begin, file(tmp)));
    if (::close(closer.release()) != 0) return errno_status(file(tmp) + ": close failed");
    if (::renameat(m_dir_fd, tmp.c_str(), m_dir_fd, name.c_str()) != 0)
      return errno_status(file(name) + ": rename failed");
    m_bytes += end - begin;
  }
  const std::string& extension = m_format.extension;
  KILN_TRY(m_index.append(batch, [&](int64_t ordinal) { return image_file_name(ordinal, extension); }));
  m_next += batch.count;
  return Status::ok();
}

Status ImageFolderSink::finish(const std::string& run_report, int64_t fallbacks) {
  if (!m_open) return invalid_argument(m_dir + ": finish before open");
  if (m_complete) return Status::ok();
  if (m_next != m_layout.total)
    return invalid_argument(fmt::format("{}: finish after {} of {} images", m_dir, m_next, m_layout.total));
  KILN_TRY(m_index.sync());
  // One filesystem sync instead of an fsync per image: every image must be durable before the manifest says
  // the folder is complete.
  if (::syncfs(m_dir_fd) != 0) return errno_status(m_dir + ": sync failed");
  json manifest = m_job;
  manifest["complete"] = true;
  manifest["fallbacks"] = fallbacks;
  if (!run_report.empty()) manifest["run_report"] = json::parse(run_report, nullptr, false);
  KILN_TRY(file_write_atomic(file(kManifestFile), manifest.dump(2) + "\n", TempName::kFixed));
  if (::unlinkat(m_dir_fd, kRunFile, 0) != 0 && errno != ENOENT) return errno_status(file(kRunFile) + ": cannot remove");
  KILN_TRY(dir_fsync(m_dir));
  m_index.reset();
  m_complete = true;
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<ImageSink>> image_folder_sink_create(const OutputSpec& spec, ImageFolderFormat format) {
  if (spec.path.empty()) return invalid_argument("no output folder given");
  if (!format.encoder_create) return invalid_argument("image folder sink: no encoder");
  return std::unique_ptr<ImageSink>(std::make_unique<ImageFolderSink>(spec, std::move(format)));
}

}  // namespace kiln
