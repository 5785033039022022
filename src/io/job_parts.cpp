#include "io/job_parts.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "core/file_read.h"
#include "io/crc32.h"
#include "io/durable_file.h"

namespace kiln {

namespace {

constexpr int64_t kMaxPartBytes = int64_t{1} << 32;

std::string crc_of(const std::string& header, const std::string& blob) {
  Crc32 crc;
  crc.update(header.data(), header.size());
  crc.update(blob.data(), blob.size());
  return crc.hex();
}

}  // namespace

// A part: "KILNPART1 <kind>\n", "<crc32 of what follows> <header bytes>\n", the header (JSON), the blob.
JobParts::JobParts(const std::string& base, std::string kind, PartOrder order)
    : m_dir(base + ".parts"), m_magic("KILNPART1 " + std::move(kind) + "\n"), m_order(order) {}

bool JobParts::exists() const {
  std::error_code ec;
  return std::filesystem::exists(m_dir, ec);
}

std::string JobParts::part_path(int64_t index) const {
  char name[32];
  std::snprintf(name, sizeof(name), "part-%08lld.bin", static_cast<long long>(index));
  return m_dir + "/" + name;
}

Result<std::vector<JobPart>> JobParts::open(const std::string& run, bool resume_run, std::vector<std::string>* notes) {
  if (exists()) {
    if (!resume_run) {
      return invalid_argument(m_dir + " holds the parts of an unfinished run: use --resume to continue it, or remove it "
                              "to start again");
    }
    return resume(run, notes);
  }
  std::error_code ec;
  std::filesystem::create_directories(m_dir, ec);
  if (ec) return io_error(m_dir + ": cannot create: " + ec.message());
  KILN_TRY(file_write_atomic(m_dir + "/run.json", run, TempName::kFixed));
  return std::vector<JobPart>{};
}

Result<std::vector<JobPart>> JobParts::resume(const std::string& run, std::vector<std::string>* notes) {
  auto recorded = file_read_text(m_dir + "/run.json");
  if (!recorded.is_ok() || recorded.value() != run) {
    return invalid_argument("--resume: " + m_dir + " holds a run with other inputs or settings; remove it to start again");
  }
  // The numbered parts there are, in index order; anything else is what a killed write left.
  std::vector<std::pair<int64_t, std::string>> numbered;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(m_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "run.json") continue;
    const std::string digits = name.size() == 17 && name.rfind("part-", 0) == 0 ? name.substr(5, 8) : "";
    if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos &&
        name.compare(13, 4, ".bin") == 0) {
      numbered.emplace_back(std::stoll(digits), entry.path().string());
    } else {
      std::filesystem::remove(entry.path(), ec);
    }
  }
  std::sort(numbered.begin(), numbered.end());
  std::vector<JobPart> parts;
  bool redo_rest = false;
  for (const auto& [index, path] : numbered) {
    const bool gap = m_order == PartOrder::kInOrder && index != static_cast<int64_t>(parts.size());
    if (!redo_rest && !gap) {
      auto part = read(index);
      if (part.is_ok()) {
        parts.push_back(std::move(part).value());
        continue;
      }
      notes->push_back(path + " is damaged (" + part.status().message() + "): its inputs are processed again");
    }
    // In order, what follows a damaged or missing part is redone too.
    redo_rest = redo_rest || m_order == PartOrder::kInOrder;
    std::filesystem::remove(path, ec);
  }
  return parts;
}

Status JobParts::write(int64_t index, const JobPart& part) const {
  const std::string header = part.header.dump();
  std::string bytes = m_magic + crc_of(header, part.blob) + " " + std::to_string(header.size()) + "\n";
  bytes += header;
  bytes += part.blob;
  return file_write_atomic(part_path(index), bytes, TempName::kFixed);
}

Result<JobPart> JobParts::read(int64_t index) const {
  KILN_TRY_ASSIGN(const std::vector<uint8_t> bytes, file_read_all(part_path(index), kMaxPartBytes));
  const std::string text(bytes.begin(), bytes.end());
  if (text.compare(0, m_magic.size(), m_magic) != 0) return unsupported_format("not a part of this job");
  const size_t line_end = text.find('\n', m_magic.size());
  const size_t space = text.find(' ', m_magic.size());
  if (line_end == std::string::npos || space == std::string::npos || space > line_end) {
    return unsupported_format("bad part header");
  }
  const std::string crc = text.substr(m_magic.size(), space - m_magic.size());
  const std::string length_text = text.substr(space + 1, line_end - space - 1);
  if (length_text.empty() || length_text.size() > 12 || length_text.find_first_not_of("0123456789") != std::string::npos) {
    return unsupported_format("bad part header");
  }
  const size_t header_size = std::stoull(length_text);
  const size_t payload = line_end + 1;
  if (header_size > text.size() - payload) return unsupported_format("truncated");
  const std::string header = text.substr(payload, header_size);
  JobPart part;
  part.index = index;
  part.blob = text.substr(payload + header_size);
  if (crc_of(header, part.blob) != crc) return unsupported_format("checksum mismatch");
  try {
    part.header = nlohmann::json::parse(header);
  } catch (const nlohmann::json::exception& e) {
    return unsupported_format(std::string("bad header: ") + e.what());
  }
  return part;
}

Status JobParts::remove() const {
  std::error_code ec;
  std::filesystem::remove_all(m_dir, ec);
  if (ec) return io_error(m_dir + ": cannot remove: " + ec.message());
  return Status::ok();
}

}  // namespace kiln
