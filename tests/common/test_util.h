// Shared test helpers: scratch directories and running the kiln CLI.
#pragma once

#include <filesystem>
#include <cstdint>
#include <string>
#include <vector>

#include "core/cpu_isa.h"

namespace kiln::test {

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return m_path; }
  std::string file(const std::string& name) const { return (m_path / name).string(); }

 private:
  std::filesystem::path m_path;
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `kiln <args>` through the shell (args are passed verbatim).
CommandResult run_kiln(const std::string& args);
CommandResult run_command(const std::string& command);

void write_text_file(const std::string& path, const std::string& text);
// The whole file, as bytes in a string or a vector (empty when it cannot be opened).
std::string read_file(const std::string& path);
std::vector<uint8_t> read_file_bytes(const std::string& path);
std::string source_path(const std::string& relative);  // path inside the source tree

// The CPU ops in their scalar reference mode (the math every GPU kernel shares) while it lives; the mode before
// comes back on every way out of the test.
class ScalarIsa {
 public:
  ScalarIsa() : m_saved(cpu_isa_active()) { cpu_isa_set(CpuIsa::kScalar); }
  ~ScalarIsa() { cpu_isa_set(m_saved); }
  ScalarIsa(const ScalarIsa&) = delete;
  ScalarIsa& operator=(const ScalarIsa&) = delete;

 private:
  CpuIsa m_saved;
};

}  // namespace kiln::test
