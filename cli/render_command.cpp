// kiln render: flags > environment > --config file > defaults.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "apps/render/render_config.h"
#include "apps/render/render_job.h"

namespace kiln::cli {

namespace {

struct RenderFlags {
  std::string input;
  std::string output;
  std::string config_path;
  int64_t seq_len = 0, stride = 0, limit = 0, images_per_file = 0, batch_size = 0, demo_points = 0;
  int64_t label_horizon = 0;
  double label_threshold = 0;
  int32_t width = 0, height = 0, threads = 0, compression_level = 0, jpeg_quality = 0, background = 0, ink = 0;
  float line_width = 0;
  std::string style, column, format, compression, mode, dtype, preview;
  bool ohlc = false, resume = false, overwrite = false, demo = false, quiet = false;
};

bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

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

Status build_config(const RenderFlags& f, const CLI::App& cmd, RenderJobConfig* c) {
  auto given = [&](const char* name) { return cmd.count(name) > 0; };
  if (!f.config_path.empty()) {
    std::vector<std::string> ignored;
    KILN_TRY(render_config_apply_yaml(f.config_path, c, &ignored));
  }
  KILN_TRY(render_config_apply_env(c, [](const char* name) { return std::getenv(name); }));

  c->demo = f.demo;
  if (given("--demo-points")) c->demo_points = f.demo_points;
  if (!f.demo && f.input.empty()) return invalid_argument("no INPUT given (or use --demo)");
  c->input.path = f.input;
  if (given("--column")) c->input.column = f.column;
  c->input.ohlc = f.ohlc;
  if (given("--seq-len")) c->windows.seq_len = f.seq_len;
  if (given("--stride")) c->windows.stride = f.stride;
  if (given("--limit")) c->windows.limit = f.limit;
  if (given("--label-horizon")) c->windows.label_horizon = f.label_horizon;
  if (given("--label-threshold")) c->windows.label_threshold = f.label_threshold;
  if (given("--style")) {
    KILN_TRY_ASSIGN(c->render.style, chart_style_parse(f.style));
  }
  if (c->render.style == ChartStyle::kOhlc) {
    c->input.ohlc = true;
    c->render.width = static_cast<int32_t>(4 * c->windows.seq_len);
  }
  if (given("--width")) c->render.width = f.width;
  if (given("--height")) c->render.height = f.height;
  if (given("--line-width")) c->render.line_width = f.line_width;
  if (given("--background")) c->render.background = static_cast<uint8_t>(f.background);
  if (given("--ink")) c->render.ink = c->render.ink_bullish = c->render.ink_bearish = static_cast<uint8_t>(f.ink);
  if (given("--dtype")) {
    if (f.dtype == "float32") {
      c->render.dtype = PixelType::kF32;
    } else if (f.dtype == "uint8") {
      c->render.dtype = PixelType::kU8;
    } else {
      return invalid_argument("--dtype must be uint8 or float32");
    }
  }
  c->output.path = f.output;
  if (given("--format")) {
    KILN_TRY_ASSIGN(c->output.format, output_format_parse(f.format));
  } else if (has_suffix(f.output, ".npy")) {
    c->output.format = OutputFormat::kNpy;
  }
  if (given("--compression")) {
    KILN_TRY_ASSIGN(c->output.compression, compression_parse(f.compression));
  }
  if (given("--compression-level")) c->output.compression_level = f.compression_level;
  if (given("--jpeg-quality")) c->output.jpeg_quality = f.jpeg_quality;
  if (given("--images-per-file")) c->output.images_per_file = f.images_per_file;
  c->output.resume = f.resume;
  c->output.overwrite = f.overwrite;
  if (f.resume && f.overwrite) return invalid_argument("--resume and --overwrite exclude each other");
  if (given("--mode")) {
    KILN_TRY_ASSIGN(c->mode, exec_mode_parse(f.mode));
  }
  if (given("--batch-size")) c->batch_size = f.batch_size;
  if (given("--threads")) c->threads = f.threads;
  c->preview_path = f.preview;
  if (c->batch_size < 1) return invalid_argument("batch size must be at least 1");
  return Status::ok();
}

void print_summary(const RenderJobSummary& s) {
  std::printf("Rendered %lld images on %s (%d threads)%s\n", static_cast<long long>(s.rendered), s.backend.c_str(),
              s.threads,
              s.resumed_from > 0 ? (", resumed after " + std::to_string(s.resumed_from) + " already written").c_str() : "");
  std::printf("Images: %lld total, skipped windows (NaN/inf): %lld, dropped (no label horizon): %lld\n",
              static_cast<long long>(s.images), static_cast<long long>(s.skipped_nonfinite),
              static_cast<long long>(s.dropped_no_future));
  const double rate = s.seconds > 0 ? static_cast<double>(s.rendered) / s.seconds : 0.0;
  std::printf("Time: %.2f s, %.0f images/s\n", s.seconds, rate);
  std::fputs(s.stage_table.c_str(), stdout);
  if (s.fallbacks > 0) {
    std::printf("Fallbacks: %lld\n", static_cast<long long>(s.fallbacks));
    for (const auto& event : s.fallback_events) std::printf("  %s\n", event.c_str());
  }
  const double ratio = s.output_bytes > 0 ? static_cast<double>(s.raw_bytes) / static_cast<double>(s.output_bytes) : 0;
  std::printf("Output: %s, %.1f MB of images, compression ratio %.1fx\n", s.output.c_str(),
              static_cast<double>(s.output_bytes) / 1e6, ratio);
}

}  // namespace

Runner render_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("render", "Render sliding windows of a series into a chart-image dataset");
  auto f = std::make_shared<RenderFlags>();
  cmd->add_option("input", f->input, "CSV, NPY or HDF5 (file.h5:/dataset) series");
  cmd->add_option("-o,--output", f->output, "Output file (.h5, .npy) or folder (png/jpeg)")->required();
  cmd->add_option("--config", f->config_path, "Predecessor-style config.yaml");
  cmd->add_option("--seq-len", f->seq_len, "Window length (default 100)");
  cmd->add_option("--stride", f->stride, "Step between windows (default 1)");
  cmd->add_option("--limit", f->limit, "Render at most N windows");
  cmd->add_option("--width", f->width, "Image width (default 800; OHLC: 4*seq_len)");
  cmd->add_option("--height", f->height, "Image height (default 500)");
  cmd->add_option("--line-width", f->line_width, "Stroke width in pixels (default 3)");
  cmd->add_option("--style", f->style, "line | ohlc");
  cmd->add_option("--column", f->column, "CSV column for line charts (default Close)");
  cmd->add_flag("--ohlc", f->ohlc, "Read Open/High/Low/Close");
  cmd->add_option("--dtype", f->dtype, "uint8 (default) | float32 (white 1.0, ink 0.0)");
  cmd->add_option("--background", f->background, "Background level 0-255 (default 255)")->check(CLI::Range(0, 255));
  cmd->add_option("--ink", f->ink, "Ink level 0-255 (default 0)")->check(CLI::Range(0, 255));
  cmd->add_option("--format", f->format, "hdf5 (default) | png | jpeg | npy");
  cmd->add_option("--compression", f->compression, "zstd (default) | gzip | none");
  cmd->add_option("--compression-level", f->compression_level, "Compression level (default 1)");
  cmd->add_option("--jpeg-quality", f->jpeg_quality, "JPEG quality (default 95)")->check(CLI::Range(1, 100));
  cmd->add_option("--images-per-file", f->images_per_file, "Shard HDF5 output: N images per file + VDS");
  cmd->add_option("--label-horizon", f->label_horizon, "Label = sign of the return H steps after the window");
  cmd->add_option("--label-threshold", f->label_threshold, "Dead zone for 3-class labels (down/flat/up)");
  cmd->add_option("--mode", f->mode, "auto | gpu | cpu");
  cmd->add_option("--batch-size", f->batch_size, "Images per batch (default 1024)");
  cmd->add_option("--threads", f->threads, "Worker threads (default: all cores)");
  cmd->add_flag("--resume", f->resume, "Continue a killed run");
  cmd->add_flag("--overwrite", f->overwrite, "Replace an existing output");
  cmd->add_option("--preview", f->preview, "Write a PNG grid of the first images");
  cmd->add_flag("--demo", f->demo, "Render a built-in synthetic OHLC random walk");
  cmd->add_option("--demo-points", f->demo_points, "Points of the demo series (default 10099)");
  cmd->add_flag("-q,--quiet", f->quiet, "No progress output");
  return [f, cmd] {
    RenderJobConfig config;
    if (Status s = build_config(*f, *cmd, &config); !s.is_ok()) return exit_with(s);
    ProgressPrinter printer(f->quiet);
    const bool quiet = f->quiet;
    auto log = [quiet](const std::string& line) {
      if (!quiet) std::fprintf(stderr, "%s\n", line.c_str());
    };
    for (const auto& note : config.notes) log(note);
    auto result = render_job_run(config, [&](const RenderProgress& p) { printer.update(p); }, log);
    if (!result.is_ok()) return exit_with(result.status());
    print_summary(result.value());
    if (!config.preview_path.empty()) std::printf("Preview: %s\n", config.preview_path.c_str());
    return 0;
  };
}

}  // namespace kiln::cli
