#include "common/test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>

namespace kiln::test {

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  m_path = std::filesystem::temp_directory_path() /
           ("kiln_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" + std::to_string(rd()));
  std::filesystem::create_directories(m_path);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(m_path, ec);
}

CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

CommandResult run_kiln(const std::string& args) { return run_command(std::string(KILN_CLI_PATH) + " " + args); }

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  const std::string bytes = read_file(path);
  return {bytes.begin(), bytes.end()};
}

std::string source_path(const std::string& relative) { return std::string(KILN_SOURCE_DIR) + "/" + relative; }

}  // namespace kiln::test
