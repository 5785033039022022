// kiln quality: per-image quality metrics (blur, brightness, contrast, sharpness, score) with pass/fail
// thresholds, for files, folders and list files; JSON lines, a table and a summary; --filter-to copies the
// passing files.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/thread_pool.h"
#include "io/durable_file.h"
#include "io/image_inputs.h"
#include "kiln/codec.h"
#include "kiln/device.h"
#include "kiln/image_ops.h"

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct QualityFlags {
  std::vector<std::string> inputs;
  std::string list;
  std::string json_path;
  std::string filter_to;
  std::string mode;
  QualityThresholds thresholds;
  int64_t batch = 64;
  int32_t threads = 0;
  int64_t max_pixels = kImageMaxPixels;
  bool quiet = false;
};

// A unique file name in `dir` for `path` within this run: name.ext, then name_2.ext, name_3.ext, ...
std::string filter_name(const std::string& path, std::set<std::string>* used) {
  const fs::path p(path);
  std::string name = p.filename().string();
  for (int k = 2; used->count(name) > 0; ++k) name = p.stem().string() + "_" + std::to_string(k) + p.extension().string();
  used->insert(name);
  return name;
}

std::string reasons_text(const std::vector<std::string>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : "; ") + r;
  return out;
}

int run_quality(const QualityFlags& f, const CLI::App& cmd) {
  ExecOptions exec;
  std::vector<std::string> notes;
  if (cmd.count("--mode") > 0) {
    auto mode = exec_mode_parse(f.mode);
    if (!mode.is_ok()) return exit_with(mode.status());
    exec.mode = mode.value();
  }
  if (Status s = exec_options_apply_env(OpKind::kQuality, &exec, &notes); !s.is_ok()) return exit_with(s);
  if (f.batch < 1) return exit_with(invalid_argument("--batch must be at least 1"));
  if (f.max_pixels < 1) return exit_with(invalid_argument("--max-pixels must be at least 1"));

  std::vector<std::string> args = f.inputs;
  if (!f.list.empty()) args.push_back("@" + f.list);
  if (args.empty()) return exit_with(invalid_argument("no INPUTS given (files, folders, @list.txt or --list)"));
  auto collected = image_inputs_collect(args);
  if (!collected.is_ok()) return exit_with(collected.status());
  const std::vector<std::string>& paths = collected.value();
  if (paths.empty()) return exit_with(invalid_argument("no .jpg/.jpeg/.png images found in the inputs"));

  if (!f.filter_to.empty()) {
    std::error_code ec;
    fs::create_directories(f.filter_to, ec);
    if (ec) return exit_with(io_error(f.filter_to + ": cannot create the folder: " + ec.message()));
  }
  std::ofstream json_out;
  std::string json_tmp;
  if (!f.json_path.empty()) {
    auto tmp = temp_file_create(f.json_path);
    if (!tmp.is_ok()) return exit_with(tmp.status());
    json_tmp = tmp.value();
    json_out.open(json_tmp, std::ios::trunc);
    if (!json_out) return exit_with(io_error(f.json_path + ": cannot write"));
  }
  auto drop_json_tmp = [&] {
    if (!json_tmp.empty()) fs::remove(json_tmp);
  };

  for (const auto& note : notes) std::fprintf(stderr, "%s\n", note.c_str());
  ThreadPool pool(f.threads);
  exec.pool = &pool;
  QualityParams params;
  DecodeOptions decode;
  decode.max_pixels = f.max_pixels;

  int64_t passed = 0, failed = 0, unreadable = 0, copied = 0;
  std::string backend, placement;
  std::vector<std::string> fallback_events;
  std::set<std::string> used_names;
  const auto t0 = std::chrono::steady_clock::now();
  if (!f.quiet) {
    std::printf("%-40s %-5s %10s %10s %9s %9s %6s  %s\n", "path", "pass", "blur", "brightness", "contrast",
                "sharpness", "score", "reasons");
  }
  for (size_t begin = 0; begin < paths.size(); begin += static_cast<size_t>(f.batch)) {
    const size_t end = std::min(paths.size(), begin + static_cast<size_t>(f.batch));
    const std::vector<std::string> chunk(paths.begin() + static_cast<std::ptrdiff_t>(begin),
                                         paths.begin() + static_cast<std::ptrdiff_t>(end));
    DecodedBatch batch = image_decode_files(chunk, decode, &pool);
    std::vector<QualityMetrics> metrics(static_cast<size_t>(batch.images.count()));
    ExecReport report;
    if (batch.images.count() > 0) {
      if (Status s = quality_measure(params, batch.images.view(), metrics.data(), exec, &report); !s.is_ok()) {
        drop_json_tmp();
        return exit_with(s);
      }
      if (backend.empty()) {
        backend = report.backend;
        placement = report.placement;
      } else if (backend.find(report.backend) == std::string::npos) {
        backend += "+" + report.backend;
      }
      if (!report.fallback.empty()) fallback_events.push_back(report.fallback);
    }
    for (size_t i = 0; i < chunk.size(); ++i) {
      const std::string& path = chunk[i];
      json line;
      line["path"] = path;
      const int64_t k = batch.index[i];
      if (k < 0) {
        ++unreadable;
        line["ok"] = false;
        line["error"] = batch.status[i].message();
        if (!f.quiet) std::printf("%-40s %-5s %s\n", path.c_str(), "ERROR", batch.status[i].message().c_str());
      } else {
        const QualityMetrics& m = metrics[static_cast<size_t>(k)];
        const QualityVerdict v = quality_judge(m, f.thresholds);
        (v.pass ? passed : failed) += 1;
        line["ok"] = true;
        line["pass"] = v.pass;
        line["reasons"] = v.reasons;
        line["blur"] = m.blur;
        line["brightness"] = m.brightness;
        line["contrast"] = m.contrast;
        line["sharpness"] = m.sharpness;
        line["score"] = m.score;
        line["backend"] = report.backend;
        if (!f.quiet) {
          std::printf("%-40s %-5s %10.2f %10.2f %9.2f %9.2f %6.3f  %s\n", path.c_str(), v.pass ? "yes" : "no", m.blur,
                      m.brightness, m.contrast, m.sharpness, m.score, reasons_text(v.reasons).c_str());
        }
        if (v.pass && !f.filter_to.empty()) {
          const std::string dest = (fs::path(f.filter_to) / filter_name(path, &used_names)).string();
          if (Status s = file_copy_atomic(path, dest); !s.is_ok()) {
            drop_json_tmp();
            return exit_with(s);
          }
          ++copied;
        }
      }
      if (json_out.is_open()) json_out << line.dump() << '\n';
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (json_out.is_open()) {
    json_out.close();
    if (!json_out) {
      drop_json_tmp();
      return exit_with(io_error(f.json_path + ": cannot write"));
    }
    if (Status s = file_commit(json_tmp, f.json_path); !s.is_ok()) {
      drop_json_tmp();
      return exit_with(s);
    }
  }
  const int64_t total = static_cast<int64_t>(paths.size());
  const int64_t measured = passed + failed;
  std::printf("%lld images: %lld passed, %lld failed, %lld unreadable\n", static_cast<long long>(total),
              static_cast<long long>(passed), static_cast<long long>(failed), static_cast<long long>(unreadable));
  std::printf("Time: %.2f s, %.0f images/s\n", seconds, seconds > 0 ? static_cast<double>(measured) / seconds : 0.0);
  if (!backend.empty()) std::printf("Backend: %s (%s)\n", backend.c_str(), placement.c_str());
  if (!fallback_events.empty()) {
    std::printf("Fallbacks: %zu\n", fallback_events.size());
    for (const auto& e : fallback_events) std::printf("  %s\n", e.c_str());
  }
  if (!f.filter_to.empty()) std::printf("Copied %lld passing files to %s\n", static_cast<long long>(copied), f.filter_to.c_str());
  if (!f.json_path.empty()) std::printf("JSON lines: %s\n", f.json_path.c_str());
  if (measured == 0) return exit_with(io_error("none of the " + std::to_string(total) + " inputs could be read"));
  return 0;
}

}  // namespace

Runner quality_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("quality", "Measure image quality (blur, brightness, contrast, sharpness, score)");
  auto f = std::make_shared<QualityFlags>();
  cmd->add_option("inputs", f->inputs, "Image files, folders (recursive .jpg/.jpeg/.png) or @list.txt");
  cmd->add_option("--list", f->list, "A list file: one path per line, '#' comments");
  cmd->add_option("--json", f->json_path, "Write one JSON object per input (JSON lines)");
  cmd->add_option("--min-blur", f->thresholds.min_blur, "Minimum Laplacian variance (default 120)");
  cmd->add_option("--min-brightness", f->thresholds.min_brightness, "Minimum mean gray level (default 30)");
  cmd->add_option("--max-brightness", f->thresholds.max_brightness, "Maximum mean gray level (default 225)");
  cmd->add_option("--min-sharpness", f->thresholds.min_sharpness, "Minimum mean Sobel magnitude (default 100)");
  cmd->add_option("--min-contrast", f->thresholds.min_contrast, "Minimum gray standard deviation (default 0)");
  cmd->add_option("--min-score", f->thresholds.min_score, "Minimum overall score 0..1 (default 0)");
  cmd->add_option("--filter-to", f->filter_to, "Copy the passing files (byte for byte) into this folder");
  cmd->add_option("--batch", f->batch, "Images decoded and measured per batch (default 64)");
  cmd->add_option("--threads", f->threads, "Worker threads for decoding and the CPU op (default: all cores)");
  cmd->add_option("--max-pixels", f->max_pixels, "Refuse images larger than this many pixels (default 64 Mi)");
  cmd->add_option("--mode", f->mode, "auto | gpu | cpu");
  cmd->add_flag("-q,--quiet", f->quiet, "Only the summary, no per-image table");
  return [f, cmd] { return run_quality(*f, *cmd); };
}

}  // namespace kiln::cli
