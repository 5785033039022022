#include "apps/faces/faces_parts.h"

#include <cstdio>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/file_read.h"
#include "io/crc32.h"
#include "io/durable_file.h"

namespace kiln {

namespace {

constexpr char kMagic[] = "KILNFACES1\n";
constexpr int64_t kMaxPartBytes = int64_t{1} << 32;

nlohmann::json counts_json(const FacesPartCounts& c) {
  return {{"images", c.images},     {"unreadable", c.unreadable}, {"images_with_faces", c.images_with_faces},
          {"faces", c.faces},       {"accepted", c.accepted},     {"duplicates", c.duplicates},
          {"written", c.written}};
}

FacesPartCounts counts_from(const nlohmann::json& j) {
  FacesPartCounts c;
  c.images = j.at("images").get<int64_t>();
  c.unreadable = j.at("unreadable").get<int64_t>();
  c.images_with_faces = j.at("images_with_faces").get<int64_t>();
  c.faces = j.at("faces").get<int64_t>();
  c.accepted = j.at("accepted").get<int64_t>();
  c.duplicates = j.at("duplicates").get<int64_t>();
  c.written = j.at("written").get<int64_t>();
  return c;
}

std::string crc_of(const std::vector<float>& rows) {
  Crc32 crc;
  crc.update(rows.data(), rows.size() * sizeof(float));
  return crc.hex();
}

}  // namespace

FacesParts::FacesParts(const std::string& base, int64_t row_floats) : m_dir(base + ".parts"), m_row_floats(row_floats) {}

bool FacesParts::exists() const {
  std::error_code ec;
  return std::filesystem::exists(m_dir, ec);
}

std::string FacesParts::part_path(int64_t index) const {
  char name[32];
  std::snprintf(name, sizeof(name), "part-%08lld.bin", static_cast<long long>(index));
  return m_dir + "/" + name;
}

Status FacesParts::start(const std::string& run) {
  std::error_code ec;
  std::filesystem::create_directories(m_dir, ec);
  if (ec) return io_error(m_dir + ": cannot create: " + ec.message());
  return file_write_atomic(m_dir + "/run.json", run, TempName::kFixed);
}

Result<std::vector<FacesPart>> FacesParts::resume(const std::string& run, std::vector<std::string>* notes) {
  auto recorded = file_read_text(m_dir + "/run.json");
  if (!recorded.is_ok() || recorded.value() != run) {
    return invalid_argument("--resume: " + m_dir + " holds a run with other inputs or settings; remove it to start again");
  }
  std::vector<FacesPart> parts;
  for (int64_t k = 0;; ++k) {
    const std::string path = part_path(k);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) break;
    auto part = read(k);
    if (part.is_ok()) {
      parts.push_back(std::move(part).value());
      continue;
    }
    notes->push_back(path + " is damaged (" + part.status().message() + "): its images are analyzed again");
    break;
  }
  // What follows the valid prefix is redone: remove it, with any temporary file a killed write left.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(m_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "run.json") continue;
    const std::string digits = name.size() == 17 && name.rfind("part-", 0) == 0 ? name.substr(5, 8) : "";
    const bool numbered = !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
    const bool kept = numbered && std::stoll(digits) < static_cast<long long>(parts.size());
    if (!kept) std::filesystem::remove(entry.path(), ec);
  }
  return parts;
}

Status FacesParts::write(int64_t index, const FacesPart& part) const {
  nlohmann::json header;
  header["first"] = part.first;
  header["counts"] = counts_json(part.counts);
  header["row_floats"] = m_row_floats;
  header["rows_crc32"] = crc_of(part.rows);
  header["paths"] = part.paths;
  header["lines"] = part.lines;
  std::string bytes = kMagic + header.dump() + "\n";
  const size_t offset = bytes.size();
  bytes.resize(offset + part.rows.size() * sizeof(float));
  std::memcpy(bytes.data() + offset, part.rows.data(), part.rows.size() * sizeof(float));
  return file_write_atomic(part_path(index), bytes, TempName::kFixed);
}

Result<FacesPart> FacesParts::read(int64_t index) const {
  KILN_TRY_ASSIGN(const std::vector<uint8_t> bytes, file_read_all(part_path(index), kMaxPartBytes));
  const std::string text(bytes.begin(), bytes.end());
  const size_t magic = std::strlen(kMagic);
  const size_t end = text.find('\n', magic);
  if (text.compare(0, magic, kMagic) != 0 || end == std::string::npos) return unsupported_format("not a faces part");
  FacesPart part;
  try {
    const nlohmann::json header = nlohmann::json::parse(text.begin() + static_cast<int64_t>(magic),
                                                        text.begin() + static_cast<int64_t>(end));
    part.first = header.at("first").get<int64_t>();
    part.counts = counts_from(header.at("counts"));
    part.paths = header.at("paths").get<std::vector<std::string>>();
    part.lines = header.at("lines").get<std::vector<std::string>>();
    const size_t blob = text.size() - end - 1;
    const auto expected = static_cast<size_t>(part.counts.written * m_row_floats) * sizeof(float);
    if (header.at("row_floats").get<int64_t>() != m_row_floats || blob != expected ||
        part.paths.size() != static_cast<size_t>(part.counts.written)) {
      return unsupported_format("its rows do not match its header");
    }
    part.rows.resize(blob / sizeof(float));
    std::memcpy(part.rows.data(), text.data() + end + 1, blob);
    if (crc_of(part.rows) != header.at("rows_crc32").get<std::string>()) return unsupported_format("checksum mismatch");
  } catch (const nlohmann::json::exception& e) {
    return unsupported_format(std::string("bad header: ") + e.what());
  }
  return part;
}

Status FacesParts::remove() const {
  std::error_code ec;
  std::filesystem::remove_all(m_dir, ec);
  if (ec) return io_error(m_dir + ": cannot remove: " + ec.message());
  return Status::ok();
}

}  // namespace kiln
