// kiln model convert --fp16 MODEL -o OUT.onnx: float16 weights with float32 inputs, outputs and compute.
#include <memory>

#include "cli/model_cli.h"

namespace kiln::cli {

#if KILN_HAS_ONNX
Runner model_convert_command_add(CLI::App& model) {
  auto* cmd = model.add_subcommand("convert", "fp16 weights (half the file; float32 inputs, outputs and compute)");
  auto args = std::make_shared<ModelCliArgs>();
  auto fp16 = std::make_shared<bool>(false);
  args->config.precision = ModelPrecision::kFp16;
  cmd->add_flag("--fp16", *fp16, "Store float weights as float16 (the one conversion there is)")->required();
  model_cli_add(cmd, args.get(), false, model_convert_params());
  return [args, fp16] { return model_cli_run(*args); };
}
#else
Runner model_convert_command_add(CLI::App& model) { return model_command_not_built(model, "convert", "fp16 weights"); }
#endif

}  // namespace kiln::cli
