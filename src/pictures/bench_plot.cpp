#include "pictures/bench_plot.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "bench_plot_source.h"

extern char** environ;

namespace kiln {

namespace {

struct RunResult {
  int spawn_error = 0;  // errno of a program that could not be started
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

RunResult run(const std::vector<std::string>& argv) {
  RunResult result;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    result.spawn_error = errno;
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  result.spawn_error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0 || (n < 0 && errno == EINTR);) {
    if (n > 0) result.output.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  if (result.spawn_error != 0) return result;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string last_line(const std::string& text) {
  const size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace

Status bench_plot_write(const nlohmann::json& results, const std::string& png, const std::string& title) {
  // KILN_PYTHON, else python3 on PATH (a virtual environment's) and then Debian's, which has python3-matplotlib.
  const char* env = std::getenv("KILN_PYTHON");
  const std::vector<std::string> pythons =
      env && *env ? std::vector<std::string>{env} : std::vector<std::string>{"python3", "/usr/bin/python3"};
  const std::string data = png + ".plot-data.json";
  const std::string drawn = png + ".plot-tmp.png";
  {
    std::ofstream out(data);
    out << results.dump();
    if (!out) return io_error(data + ": cannot write the results to plot");
  }
  std::string missing;  // the interpreters tried that could not plot, and why
  RunResult r;
  for (const std::string& python : pythons) {
    r = run({python, "-c", bench_plot_program::kScript, data, drawn, "--title", title});
    if (r.spawn_error == 0 && r.exit_code == 0) break;
    const bool no_matplotlib = r.output.find("No module named 'matplotlib'") != std::string::npos;
    if (r.spawn_error == 0 && !no_matplotlib) break;  // the plotter itself failed
    missing += (missing.empty() ? "" : "; ") + python +
               (r.spawn_error != 0 ? std::string(": ") + std::strerror(r.spawn_error) : ": no matplotlib");
  }
  std::error_code ec;
  std::filesystem::remove(data, ec);
  if (r.spawn_error != 0 || r.exit_code != 0) std::filesystem::remove(drawn, ec);
  if (r.spawn_error != 0 || r.output.find("No module named 'matplotlib'") != std::string::npos) {
    return Status(Errc::kNotImplemented, "--plot runs Python 3 with matplotlib (" + missing + "): apt-get install "
                                         "python3-matplotlib, or set KILN_PYTHON to an interpreter that has it");
  }
  if (r.exit_code != 0) return invalid_argument("--plot: the plotter failed: " + last_line(r.output));
  std::filesystem::rename(drawn, png, ec);
  if (ec) return io_error(png + ": cannot write the plot: " + ec.message());
  return Status::ok();
}

}  // namespace kiln
