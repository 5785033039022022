#include <cstdio>

#include "cli/commands.h"
#include "kiln/version.h"

namespace kiln::cli {

int exit_with(const Status& status) {
  if (status.is_ok()) return 0;
  std::fprintf(stderr, "kiln: %s\n", status.message().c_str());
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

int main(int argc, char** argv) {
  CLI::App app{"kiln: chart-image datasets and image processing on GPU or CPU"};
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION_STRING);
  app.require_subcommand(1);
  const auto render = kiln::cli::render_command_add(app);
  const auto info = kiln::cli::info_command_add(app);
  const auto devices = kiln::cli::devices_command_add(app);
  const auto bench = kiln::cli::bench_command_add(app);
  CLI11_PARSE(app, argc, argv);
  if (app.got_subcommand("render")) return render();
  if (app.got_subcommand("info")) return info();
  if (app.got_subcommand("devices")) return devices();
  if (app.got_subcommand("bench")) return bench();
  return 2;
}
