#include "apps/render/sink_records.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/durable_file.h"

namespace kiln {

namespace fs = std::filesystem;
using nlohmann::json;

// --- job description ---

json job_json_make(OutputFormat format, const DatasetLayout& layout, const DatasetAttributes& attributes,
                   bool complete) {
  json j = json::object();
  j["format"] = output_format_name(format);
  j["dtype"] = pixel_type_name(layout.dtype);
  j["shape"] = layout.channels > 1 ? json::array({layout.total, layout.height, layout.width, layout.channels})
                                   : json::array({layout.total, layout.height, layout.width});
  j["count"] = layout.total;
  j["has_labels"] = layout.has_labels;
  j["seq_channels"] = layout.seq_channels;
  j["seq_len"] = attributes.seq_len;
  j["stride"] = attributes.stride;
  j["line_width"] = attributes.line_width;
  j["style"] = attributes.style;
  j["width"] = attributes.width;
  j["height"] = attributes.height;
  j["dpi"] = attributes.dpi;
  j["source"] = attributes.source;
  j["column"] = attributes.column;
  j["skipped_windows"] = attributes.skipped_windows;
  j["dropped_no_future"] = attributes.dropped_no_future;
  j["label_horizon"] = attributes.label_horizon;
  j["label_threshold"] = attributes.label_threshold;
  j["kiln_version"] = attributes.kiln_version;
  j["config_json"] = attributes.config_json;
  j["created_at"] = attributes.created_at;
  j["complete"] = complete;
  return j;
}

std::string job_json_diff(const json& stored, const json& now, std::initializer_list<const char*> ignore) {
  if (!stored.is_object()) return "stored description (not a JSON object)";
  auto ignored = [&](const std::string& key) {
    if (key == "created_at" || key == "complete" || key == "fallbacks" || key == "run_report") return true;
    return std::any_of(ignore.begin(), ignore.end(), [&](const char* k) { return key == k; });
  };
  auto shorten = [](const json* value) {
    if (value == nullptr) return std::string("missing");
    std::string text = value->dump();
    if (text.size() > 48) text = text.substr(0, 45) + "...";
    return text;
  };
  std::vector<std::string> keys;
  for (auto it = stored.begin(); it != stored.end(); ++it) keys.push_back(it.key());
  for (auto it = now.begin(); it != now.end(); ++it) keys.push_back(it.key());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const std::string& key : keys) {
    if (ignored(key)) continue;
    const json* a = stored.contains(key) ? &stored.at(key) : nullptr;
    const json* b = now.contains(key) ? &now.at(key) : nullptr;
    if (a != nullptr && b != nullptr && *a == *b) continue;
    return key + " (stored " + shorten(a) + ", now " + shorten(b) + ")";
  }
  return "";
}

// --- index CSV ---

namespace {
constexpr const char* kIndexHeader = "image,start_row,label\n";
}

IndexCsv::~IndexCsv() { reset(); }

void IndexCsv::reset() {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
  m_path.clear();
  m_line_buffer.clear();
  m_bytes = 0;
}

Status IndexCsv::create(const std::string& path) {
  reset();
  m_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (m_fd < 0) return errno_status(path + ": cannot create");
  m_path = path;
  const std::string header = kIndexHeader;
  KILN_TRY(fd_write_all(m_fd, header.data(), header.size(), m_path));
  m_bytes = header.size();
  return Status::ok();
}

Result<int64_t> IndexCsv::open_resume(const std::string& path, int64_t max_rows) {
  reset();
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    KILN_TRY(create(path));
    return int64_t{0};
  }
  KILN_TRY_ASSIGN(const std::string text, file_read_text(path));
  const std::string header = kIndexHeader;
  if (text.compare(0, header.size(), header) != 0) {
    KILN_TRY(create(path));
    return int64_t{0};
  }
  size_t end = header.size();
  int64_t rows = 0;
  while (rows < max_rows) {
    const size_t newline = text.find('\n', end);
    if (newline == std::string::npos) break;  // partial line from a crash
    end = newline + 1;
    ++rows;
  }
  m_fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (m_fd < 0) return errno_status(path + ": cannot open");
  m_path = path;
  if (::ftruncate(m_fd, static_cast<off_t>(end)) != 0) return errno_status(path + ": truncate failed");
  if (::lseek(m_fd, static_cast<off_t>(end), SEEK_SET) < 0) return errno_status(path + ": seek failed");
  m_bytes = end;
  return rows;
}

Status IndexCsv::append(const EncodedBatch& batch, const std::function<std::string(int64_t)>& image_name) {
  if (m_fd < 0) return invalid_argument("index csv: not open");
  m_line_buffer.clear();
  for (int32_t k = 0; k < batch.count; ++k) {
    m_line_buffer += image_name(batch.first + k);
    m_line_buffer += ',';
    m_line_buffer += std::to_string(batch.index[static_cast<size_t>(k)]);
    m_line_buffer += ',';
    if (!batch.labels.empty()) m_line_buffer += std::to_string(static_cast<int>(batch.labels[static_cast<size_t>(k)]));
    m_line_buffer += '\n';
  }
  KILN_TRY(fd_write_all(m_fd, m_line_buffer.data(), m_line_buffer.size(), m_path));
  m_bytes += m_line_buffer.size();
  return Status::ok();
}

Status IndexCsv::sync() {
  if (m_fd < 0) return invalid_argument("index csv: not open");
  if (::fsync(m_fd) != 0) return errno_status(m_path + ": fsync failed");
  return Status::ok();
}

}  // namespace kiln
