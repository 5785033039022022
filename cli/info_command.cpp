#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "apps/render/hdf5_info.h"

namespace kiln::cli {

Runner info_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Describe a kiln dataset (HDF5 file, shard or VDS)");
  auto path = std::make_shared<std::string>();
  auto verify = std::make_shared<bool>(false);
  cmd->add_option("file", *path, "Dataset file")->required();
  cmd->add_flag("--verify", *verify,
                "Recompute the content checksum of every data file and compare it with the stored one (exit 3 if "
                "damaged)");
  return [path, verify] {
    std::string text;
    const Status s = *verify ? hdf5_verify(*path, &text) : hdf5_info_print(*path, &text);
    std::fputs(text.c_str(), stdout);
    if (!s.is_ok()) return exit_with(s);
    return 0;
  };
}

}  // namespace kiln::cli
