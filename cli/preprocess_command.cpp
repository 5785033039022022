// kiln preprocess (not implemented yet).
#include "cli/commands.h"

namespace kiln::cli {

Runner preprocess_command_add(CLI::App& app) {
  app.add_subcommand("preprocess", "preprocess images (not implemented yet)");
  return [] { return exit_with(Status(Errc::kNotImplemented, "preprocess: not implemented yet")); };
}

}  // namespace kiln::cli
