// What kiln model convert and kiln model quantize share: the frames and measurement flags, and the summary print.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

#if KILN_HAS_ONNX
#include "kiln/apps/precision.h"
#endif

namespace kiln::cli {

#if KILN_HAS_ONNX
struct ModelCliArgs {
  ModelPrecisionConfig config;
  bool json = false;
};

// MODEL, -o, --calibrate, --max-frames, --threads, --seconds, --json.
void model_cli_add(CLI::App* cmd, ModelCliArgs* args, bool calibrate_required);
// Runs the job and prints its summary (or its JSON); returns the exit code.
int model_cli_run(const ModelCliArgs& args);
#endif

#if !KILN_HAS_ONNX
// The `name` subcommand of a kiln built without libonnx or ONNX Runtime: it says so and exits with an error.
Runner model_command_not_built(CLI::App& model, const char* name, const char* summary);
#endif

Runner model_convert_command_add(CLI::App& model);
Runner model_quantize_command_add(CLI::App& model);

}  // namespace kiln::cli
