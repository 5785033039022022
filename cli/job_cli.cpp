#include "cli/job_cli.h"

#include <cstdio>

namespace kiln::cli {

void InputArgs::add_to(CLI::App* cmd) {
  cmd->add_option("inputs", inputs, "Image files, folders (recursive .jpg/.jpeg/.png) or @list.txt");
  cmd->add_option("--list", list, "A list file: one path per line, '#' comments (the same as @FILE)");
}

std::vector<std::string> InputArgs::paths() const {
  std::vector<std::string> paths = inputs;
  if (!list.empty()) paths.push_back("@" + list);
  return paths;
}

Status job_configure(const CliParams& flags, void* config, ExecSettings* exec, std::optional<OpKind> op, bool quiet) {
  std::vector<std::string> notes;
  KILN_TRY(op ? exec_settings_apply_env(exec, *op, env_lookup_process, &notes)
              : exec_settings_apply_env(exec, env_lookup_process, &notes));
  KILN_TRY(flags.apply(config));
  if (!quiet) {
    for (const auto& note : notes) std::fprintf(stderr, "%s\n", note.c_str());
  }
  return Status::ok();
}

void print_time(double seconds, int64_t images) {
  std::printf("Time: %.2f s, %.0f images/s\n", seconds, seconds > 0 ? static_cast<double>(images) / seconds : 0.0);
}

void print_backend(const std::string& backend, const std::string& placement) {
  if (!backend.empty()) std::printf("Backend: %s (%s)\n", backend.c_str(), placement.c_str());
}

void print_fallbacks(int64_t count, const std::vector<std::string>& events) {
  if (count == 0) return;
  std::printf("Fallbacks: %lld\n", static_cast<long long>(count));
  for (const auto& e : events) std::printf("  %s\n", e.c_str());
}

void print_skipped(const std::string& error) { std::fprintf(stderr, "kiln: skipped %s\n", text_one_line(error).c_str()); }

JobEvents<ImageRecord> file_job_events(bool quiet) {
  JobEvents<ImageRecord> events;
  events.record = [](const ImageRecord& r) {
    if (!r.ok) print_skipped(r.error);
  };
  if (!quiet) {
    events.progress = [](int64_t done, int64_t total, const std::string& backend) {
      std::fprintf(stderr, "Processed %lld/%lld inputs (%s)\n", static_cast<long long>(done),
                   static_cast<long long>(total), backend.c_str());
    };
    events.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  }
  return events;
}

}  // namespace kiln::cli
