#include "apps/images/json_lines.h"

#include <filesystem>

#include "io/durable_file.h"

namespace kiln {

JsonLines::~JsonLines() {
  if (!m_tmp.empty()) {
    std::error_code ec;
    std::filesystem::remove(m_tmp, ec);
  }
}

Status JsonLines::open(const std::string& path) {
  m_path = path;
  KILN_TRY_ASSIGN(m_tmp, temp_file_create(path));
  m_out.open(m_tmp, std::ios::trunc);
  if (!m_out) return io_error(path + ": cannot write");
  return Status::ok();
}

void JsonLines::write(const nlohmann::json& line) {
  if (m_out.is_open()) m_out << line.dump() << '\n';
}

void JsonLines::write_line(const std::string& line) {
  if (m_out.is_open()) m_out << line << '\n';
}

Status JsonLines::commit() {
  if (!m_out.is_open()) return Status::ok();
  m_out.close();
  if (!m_out) return io_error(m_path + ": cannot write");
  KILN_TRY(file_commit(m_tmp, m_path));
  m_tmp.clear();
  return Status::ok();
}

}  // namespace kiln
