// kiln quality (not implemented yet).
#include "cli/commands.h"

namespace kiln::cli {

Runner quality_command_add(CLI::App& app) {
  app.add_subcommand("quality", "quality images (not implemented yet)");
  return [] { return exit_with(Status(Errc::kNotImplemented, "quality: not implemented yet")); };
}

}  // namespace kiln::cli
