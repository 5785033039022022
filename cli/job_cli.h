// What every job command shares: inputs from arguments, settings from the environment then the flags, and the
// summary lines (time, backend, fallbacks).
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/params_cli.h"
#include "kiln/apps/images.h"
#include "kiln/exec.h"

namespace kiln::cli {

// The image arguments of a command: INPUTS... and --list FILE (the same as @FILE).
struct InputArgs {
  std::vector<std::string> inputs;
  std::string list;

  void add_to(CLI::App* cmd);
  std::vector<std::string> paths() const;  // inputs, then "@list"
};

// Environment (KILN_THREADS, GPU_BATCH_SIZE, GPU_BACKEND, ALL_GPU, the op's switch; no op: a job whose stages have
// their own switches), then the flags. The notes of
// the environment go to stderr unless quiet.
Status job_configure(const CliParams& flags, void* config, ExecSettings* exec, std::optional<OpKind> op, bool quiet);

// What a job over image files reports while it runs: skipped inputs on stderr, and unless quiet the progress after
// each batch and the notes of the configuration and of fallbacks.
JobEvents<ImageRecord> file_job_events(bool quiet);
// "kiln: skipped <error>" on stderr, one line: an input the job could not read.
void print_skipped(const std::string& error);

void print_time(double seconds, int64_t images);
void print_backend(const std::string& backend, const std::string& placement);
void print_fallbacks(int64_t count, const std::vector<std::string>& events);

}  // namespace kiln::cli
