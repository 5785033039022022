#include "bench_common.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "pictures/bench_plot.h"

namespace kiln::bench {

void plot_option_add(CLI::App& app, std::string* path) {
  app.add_option("--plot", *path, "Also draw the results into this PNG (matplotlib; KILN_PYTHON names the Python)")
      ->type_name("FILE");
}

int plot_write(const nlohmann::json& results, const std::string& path, const std::string& title) {
  if (path.empty()) return 0;
  if (Status s = bench_plot_write(results, path, title); !s.is_ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  std::fprintf(stderr, "plot: %s\n", path.c_str());
  return 0;
}

std::optional<int> args_parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    std::cerr << app.get_name() << ": " << e.what() << "\n" << app.help();
    return 2;
  }
  return std::nullopt;
}

CLI::Validator positive() {
  return CLI::Validator(
      [](std::string& text) {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        return end != text.c_str() && *end == '\0' && value > 0.0 ? std::string() : "must be > 0, not " + text;
      },
      "");
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::optional<std::string> command_output(const std::string& command, int* exit_status) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string text;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) text.append(buf, n);
  const int status = pclose(pipe);
  *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return text;
}

std::string git_commit() {
  int exit_status = -1;
  const std::optional<std::string> out =
      command_output("git -C " + shell_quote(KILN_SOURCE_DIR) + " rev-parse --short HEAD 2>/dev/null", &exit_status);
  if (!out || exit_status != 0 || out->empty()) return "unknown";
  return out->substr(0, out->find_first_of("\r\n"));
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

}  // namespace kiln::bench
