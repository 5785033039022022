#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "apps/render/hdf5_info.h"

namespace kiln::cli {

Runner info_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Describe a kiln dataset (HDF5 file, shard or VDS)");
  auto path = std::make_shared<std::string>();
  cmd->add_option("file", *path, "Dataset file")->required();
  return [path] {
    std::string text;
    if (Status s = hdf5_info_print(*path, &text); !s.is_ok()) return exit_with(s);
    std::fputs(text.c_str(), stdout);
    return 0;
  };
}

}  // namespace kiln::cli
