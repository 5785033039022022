// What kiln model convert and kiln model quantize share: the frames and measurement flags, and the summary print.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>

#include "cli/commands.h"
#include "cli/params_cli.h"

#if KILN_HAS_ONNX
#include "kiln/apps/precision.h"
#endif

namespace kiln::cli {

#if KILN_HAS_ONNX
struct ModelCliArgs {
  ModelPrecisionConfig config;
  std::unique_ptr<CliParams> flags;  // the job's declared settings (model_convert_params / model_quantize_params)
  bool json = false;
};

// MODEL, --calibrate, --json, and a flag for each of `params` (-o for --output).
void model_cli_add(CLI::App* cmd, ModelCliArgs* args, bool calibrate_required,
                   const ParamTable<ModelPrecisionConfig>& params);
// Applies the flags, runs the job and prints its summary (or its JSON); returns the exit code.
int model_cli_run(ModelCliArgs& args);
#endif

#if !KILN_HAS_ONNX
// The `name` subcommand of a kiln built without libonnx or ONNX Runtime: it says so and exits with an error.
Runner model_command_not_built(CLI::App& model, const char* name, const char* summary);
#endif

Runner model_convert_command_add(CLI::App& model);
Runner model_quantize_command_add(CLI::App& model);

}  // namespace kiln::cli
