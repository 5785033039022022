// The subcommands of `kiln bench`. Each registers its options on the bench app and returns its runner;
// bench_command_add runs the one that was given.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/bench/bench_sizes.h"
#include "cli/commands.h"

namespace kiln::cli {

// `flag` taking names of bench::kBenchSizes (comma-separated too), refusing any other name when the command line is
// read.
void bench_sizes_option_add(CLI::App* cmd, const std::string& flag, std::vector<std::string>* sizes);

Runner bench_render_command_add(CLI::App& bench);
Runner bench_ops_command_add(CLI::App& bench);
Runner bench_infer_command_add(CLI::App& bench);
Runner bench_faces_command_add(CLI::App& bench);
Runner bench_segment_command_add(CLI::App& bench);

// --plot FILE, which every subcommand has: its JSON results drawn with matplotlib (pictures/bench_plot.h).
void bench_plot_option_add(CLI::App* cmd, std::string* path);
// 0 (nothing to do without a path), or the exit code of a plot that failed, its error printed.
int bench_plot_finish(const nlohmann::json& results, const std::string& path, const std::string& title);

}  // namespace kiln::cli
