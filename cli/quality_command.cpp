// kiln quality: per-image quality metrics with pass/fail thresholds (the quality job), as a table, JSON lines and a
// summary.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/job_cli.h"
#include "kiln/apps/images.h"

namespace kiln::cli {

namespace {

std::string reasons_text(const std::vector<std::string>& reasons) {
  std::string out;
  for (const auto& r : reasons) {
    if (!out.empty()) out += "; ";
    out += r;
  }
  return out;
}

void print_row(const QualityRecord& r) {
  if (!r.ok) {
    std::printf("%-40s %-5s %s\n", r.name.c_str(), "ERROR", r.error.c_str());
    return;
  }
  const QualityMetrics& m = r.metrics;
  std::printf("%-40s %-5s %10.2f %10.2f %9.2f %9.2f %6.3f  %s\n", r.name.c_str(), r.verdict.pass ? "yes" : "no",
              m.blur, m.brightness, m.contrast, m.sharpness, m.score, reasons_text(r.verdict.reasons).c_str());
}

}  // namespace

Runner quality_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("quality", "Measure image quality (blur, brightness, contrast, sharpness, score)");
  auto inputs = std::make_shared<InputArgs>();
  inputs->add_to(cmd);
  auto quiet = std::make_shared<bool>(false);
  cmd->add_flag("-q,--quiet", *quiet, "Only the summary, no per-image table");
  auto flags = std::make_shared<CliParams>(cmd, quality_job_params());
  return [cmd, inputs, quiet, flags] {
    QualityJobConfig config;
    if (Status s = job_configure(*flags, &config, &config.exec, OpKind::kQuality, *quiet); !s.is_ok()) {
      return exit_with(s);
    }
    JobEvents<QualityRecord> events;
    if (!*quiet) {
      std::printf("%-40s %-5s %10s %10s %9s %9s %6s  %s\n", "path", "pass", "blur", "brightness", "contrast",
                  "sharpness", "score", "reasons");
      events.record = print_row;
      events.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    }
    auto result = quality_job_run(config, ImageInputs{inputs->paths(), {}}, events);
    if (!result.is_ok()) return exit_with(result.status());
    const QualityJobSummary& s = result.value();
    std::printf("%lld images: %lld passed, %lld failed, %lld unreadable\n", static_cast<long long>(s.total),
                static_cast<long long>(s.passed), static_cast<long long>(s.failed),
                static_cast<long long>(s.unreadable));
    if (s.resumed > 0) {
      std::printf("Resumed: %lld images were done by the killed run\n", static_cast<long long>(s.resumed));
    }
    print_time(s.seconds, s.passed + s.failed);
    print_backend(s.backend, s.placement);
    print_fallbacks(s.fallbacks, s.fallback_events);
    if (!config.filter_to.empty()) {
      std::printf("Copied %lld passing files to %s\n", static_cast<long long>(s.copied), config.filter_to.c_str());
    }
    if (!config.json.empty()) std::printf("JSON lines: %s\n", config.json.c_str());
    if (s.passed + s.failed == 0) {
      return exit_with(io_error("none of the " + std::to_string(s.total) + " inputs could be read"));
    }
    return 0;
  };
}

}  // namespace kiln::cli
