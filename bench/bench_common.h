// What the bench programs share besides their statistics (apps/bench/bench_stats.h): command-line parsing through CLI11,
// and the run information (source commit, CPU model) that their machine-readable output carries.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kiln::bench {

// Parses argv into app's options. nullopt: go on and run. Otherwise the exit code: 0 after --help (printed on
// stdout), 2 after a bad argument (the error and the help on stderr).
std::optional<int> args_parse(CLI::App& app, int argc, char** argv);

// A check for options that must be a number > 0 (seconds, repeats, threads).
CLI::Validator positive();

// `s` in single quotes for /bin/sh.
std::string shell_quote(const std::string& s);

// The standard output of `command` run by /bin/sh, with its exit status in *exit_status (-1 if it did not
// exit normally); nullopt when it could not be started.
std::optional<std::string> command_output(const std::string& command, int* exit_status);

// --plot FILE: the program's JSON results drawn with matplotlib (pictures/bench_plot.h), as `kiln bench --plot` does.
void plot_option_add(CLI::App& app, std::string* path);
// 0 (nothing to do without a path), or 1 after printing why the plot failed.
int plot_write(const nlohmann::json& results, const std::string& path, const std::string& title);

std::string git_commit();  // the source tree's short HEAD commit, or "unknown"
std::string cpu_model();   // /proc/cpuinfo's first "model name", or "unknown"

}  // namespace kiln::bench
