// kiln render: a series (or the demo) -> a chart-image dataset (the render job). Settings: flags > environment >
// --config file > defaults.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/job_cli.h"
#include "kiln/apps/render.h"

namespace kiln::cli {

namespace {

class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool quiet) : m_quiet(quiet), m_tty(::isatty(STDERR_FILENO) != 0) {}

  void update(const RenderProgress& p) {
    if (m_quiet) return;
    const double rate = p.seconds > 0 ? static_cast<double>(p.done - p.resumed) / p.seconds : 0.0;
    if (m_tty) {
      const int width = 30;
      const int filled = static_cast<int>(width * static_cast<double>(p.done) / std::max<int64_t>(1, p.total));
      const double eta = rate > 0 ? static_cast<double>(p.total - p.done) / rate : 0.0;
      std::fprintf(stderr, "\r[%s%s] %lld/%lld  %.0f img/s  ETA %.0fs ", std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), static_cast<long long>(p.done),
                   static_cast<long long>(p.total), rate, eta);
      if (p.done == p.total) std::fprintf(stderr, "\n");
    } else {
      std::fprintf(stderr, "Processed %lld/%lld images (%s)\n", static_cast<long long>(p.done),
                   static_cast<long long>(p.total), p.backend == "cpu" ? "CPU" : p.backend.c_str());
    }
  }

 private:
  bool m_quiet;
  bool m_tty;
};

void print_summary(const RenderJobSummary& s) {
  if (!s.shard.empty()) std::printf("Shard: %s\n", s.shard.c_str());
  std::printf("Rendered %lld images on %s (%d threads)%s\n", static_cast<long long>(s.rendered), s.backend.c_str(),
              s.threads,
              s.resumed_from > 0 ? (", resumed after " + std::to_string(s.resumed_from) + " already written").c_str() : "");
  std::printf("Images: %lld total, skipped windows (NaN/inf): %lld, dropped (no label horizon): %lld\n",
              static_cast<long long>(s.images), static_cast<long long>(s.skipped_nonfinite),
              static_cast<long long>(s.dropped_no_future));
  if (s.symbols > 0 || s.missing_days > 0) {
    std::printf("Panel: %lld symbols; missing days: %lld (%lld absent from a symbol's dates), filled: %lld\n",
                static_cast<long long>(s.symbols), static_cast<long long>(s.missing_days),
                static_cast<long long>(s.absent_days), static_cast<long long>(s.filled_days));
  }
  print_time(s.seconds, s.rendered);
  std::fputs(s.stage_table.c_str(), stdout);
  print_fallbacks(s.fallbacks, s.fallback_events);
  const double ratio = s.output_bytes > 0 ? static_cast<double>(s.raw_bytes) / static_cast<double>(s.output_bytes) : 0;
  std::printf("Output: %s, %.1f MB of images, compression ratio %.1fx\n", s.output.c_str(),
              static_cast<double>(s.output_bytes) / 1e6, ratio);
}

// The summary's counts as one JSON object (the keys of kiln.render_job's summary dict).
void print_summary_json(const RenderJobSummary& s) {
  const nlohmann::json j = {{"images", s.images},           {"rendered", s.rendered},
                            {"resumed_from", s.resumed_from}, {"skipped", s.skipped_nonfinite},
                            {"dropped_no_future", s.dropped_no_future}, {"symbols", s.symbols},
                            {"missing_days", s.missing_days}, {"absent_days", s.absent_days},
                            {"filled_days", s.filled_days},   {"seconds", s.seconds},
                            {"output_bytes", s.output_bytes}, {"backend", s.backend},
                            {"output", s.output},             {"shard", s.shard},
                            {"fallbacks", s.fallbacks}};
  std::printf("%s\n", j.dump().c_str());
}

struct RenderArgs {
  std::string input;
  std::string config_path;
  bool quiet = false;
  bool json = false;
};

}  // namespace

Runner render_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("render", "Render sliding windows of a series into a chart-image dataset");
  auto args = std::make_shared<RenderArgs>();
  cmd->add_option("input", args->input,
                  "CSV, NPY or HDF5 (file.h5:/dataset) series; a table with a symbol column (a CSV, an HDF5 compound "
                  "dataset or group of columns) or a folder of CSV files is a panel");
  cmd->add_option("--config", args->config_path, "A config.yaml (the predecessor's file is accepted unchanged)");
  cmd->add_flag("-q,--quiet", args->quiet, "No progress output");
  cmd->add_flag("--json", args->json, "Print the summary as one JSON object");
  auto flags = std::make_shared<CliParams>(cmd, render_job_params(), std::map<std::string, std::string>{{"output", "-o"}});
  return [args, flags] {
    RenderJobConfig config;
    if (!args->config_path.empty()) {
      std::vector<std::string> ignored;
      if (Status s = render_config_apply_yaml(args->config_path, &config, &ignored); !s.is_ok()) return exit_with(s);
    }
    if (Status s = job_configure(*flags, &config, &config.exec, OpKind::kRender, args->quiet); !s.is_ok()) {
      return exit_with(s);
    }
    config.input.path = args->input;
    ProgressPrinter printer(args->quiet);
    const bool quiet = args->quiet;
    auto log = [quiet](const std::string& line) {
      if (!quiet) std::fprintf(stderr, "%s\n", line.c_str());
    };
    auto result = render_job_run(config, [&](const RenderProgress& p) { printer.update(p); }, log);
    if (!result.is_ok()) return exit_with(result.status());
    for (const std::string& note : result->resume_notes) std::fprintf(stderr, "kiln: warning: %s\n", note.c_str());
    if (args->json) {
      print_summary_json(result.value());
      return 0;
    }
    print_summary(result.value());
    if (!config.preview.empty()) std::printf("Preview: %s\n", config.preview.c_str());
    return 0;
  };
}

}  // namespace kiln::cli
