// The subcommands of `kiln bench`. Each registers its options on the bench app and returns its runner;
// bench_command_add runs the one that was given.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"

namespace kiln::cli {

struct BenchSize {
  const char* name;
  int32_t width;
  int32_t height;
};
// The predecessor's benchmark_gpu.py image sizes (bench ops, bench faces).
constexpr std::array<BenchSize, 3> kBenchSizes = {{{"small", 300, 300}, {"medium", 800, 600}, {"large", 1920, 1080}}};
// `flag` taking names of kBenchSizes (comma-separated too), refusing any other name when the command line is read.
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
