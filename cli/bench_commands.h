// The subcommands of `kiln bench`. Each registers its options on the bench app and returns its runner;
// bench_command_add runs the one that was given.
#pragma once

#include "cli/commands.h"

namespace kiln::cli {

Runner bench_render_command_add(CLI::App& bench);
Runner bench_ops_command_add(CLI::App& bench);
Runner bench_infer_command_add(CLI::App& bench);
Runner bench_faces_command_add(CLI::App& bench);
Runner bench_segment_command_add(CLI::App& bench);

}  // namespace kiln::cli
