#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "cli/commands.h"
#include "io/hdf5_library.h"
#include "kiln/version.h"
#include "profiler/profile_summary.h"
#include "profiler/profiler.h"
#include "profiler/trace_export.h"

namespace kiln::cli {

int exit_with(const Status& status) {
  if (status.is_ok()) return 0;
  std::fprintf(stderr, "kiln: %s\n", status.message_line().c_str());
  switch (status.code()) {
    case Errc::kInvalidArgument: return 2;
    case Errc::kIoError: return 3;
    case Errc::kUnsupportedFormat: return 4;
    case Errc::kDeviceError: return 5;
    case Errc::kOutOfMemory: return 6;
    case Errc::kCancelled: return 130;
    default: return 1;
  }
}

}  // namespace kiln::cli

namespace {

int run_cli(int argc, char** argv) {
  CLI::App app{"kiln: chart-image datasets and image processing on GPU or CPU"};
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION_STRING);
  app.require_subcommand(1);
  std::string trace_path;
  bool profile = false;
  app.add_option("--trace", trace_path, "Write a Chrome trace (Perfetto, chrome://tracing) of this command")
      ->configurable(false);
  app.add_flag("--profile", profile, "Print per-range timings (calls, total, mean, p95, share) at exit");
  app.fallthrough();
  const auto render = kiln::cli::render_command_add(app);
  const auto info = kiln::cli::info_command_add(app);
  const auto devices = kiln::cli::devices_command_add(app);
  const auto bench = kiln::cli::bench_command_add(app);
  const auto quality = kiln::cli::quality_command_add(app);
  const auto preprocess = kiln::cli::preprocess_command_add(app);
  const auto models = kiln::cli::models_command_add(app);
  const auto infer = kiln::cli::infer_command_add(app);
  const auto faces = kiln::cli::faces_command_add(app);
  const auto segment = kiln::cli::segment_command_add(app);
  const auto merge = kiln::cli::merge_command_add(app);
  const auto model = kiln::cli::model_command_add(app);
  const auto serve = kiln::cli::serve_command_add(app);
  CLI11_PARSE(app, argc, argv);
  if (profile || !trace_path.empty()) {
    kiln::Profiler::instance().enable(true);
    kiln::Profiler::instance().set_thread_name("main");
  }
  int code = 2;
  if (app.got_subcommand("render")) code = render();
  if (app.got_subcommand("info")) code = info();
  if (app.got_subcommand("devices")) code = devices();
  if (app.got_subcommand("bench")) code = bench();
  if (app.got_subcommand("quality")) code = quality();
  if (app.got_subcommand("preprocess")) code = preprocess();
  if (app.got_subcommand("models")) code = models();
  if (app.got_subcommand("infer")) code = infer();
  if (app.got_subcommand("faces")) code = faces();
  if (app.got_subcommand("segment")) code = segment();
  if (app.got_subcommand("merge")) code = merge();
  if (app.got_subcommand("model")) code = model();
  if (app.got_subcommand("serve")) code = serve();
  if (profile) std::fputs(kiln::profile_summary_table().c_str(), stderr);
  if (!trace_path.empty()) {
    if (const kiln::Status s = kiln::trace_write_chrome(trace_path); !s.is_ok()) return kiln::cli::exit_with(s);
  }
  return code;
}

}  // namespace

// kiln reports failures as Status; an exception reaching here is a defect or an allocation the input asked for, and
// still ends with one line and an exit code rather than an abort (which would skip the output files' clean-up).
int main(int argc, char** argv) {
  kiln::hdf5_exit_cleanup_disable();
  try {
    return run_cli(argc, argv);
  } catch (const std::bad_alloc&) {
    return kiln::cli::exit_with(kiln::Status(kiln::Errc::kOutOfMemory, "out of memory"));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln: internal error (please report): %s\n", kiln::text_one_line(e.what()).c_str());
    return 70;  // EX_SOFTWARE
  }
}
