// kiln model quantize --int8 --calibrate FRAMES MODEL -o OUT.onnx: static QDQ quantization, calibrated on frames.
#include <memory>

#include "cli/model_cli.h"

namespace kiln::cli {

#if KILN_HAS_ONNX
Runner model_quantize_command_add(CLI::App& model) {
  auto* cmd = model.add_subcommand("quantize", "Static int8 quantization (QDQ), calibrated on real frames");
  auto args = std::make_shared<ModelCliArgs>();
  auto int8 = std::make_shared<bool>(false);
  args->config.precision = ModelPrecision::kInt8;
  cmd->add_flag("--int8", *int8, "int8 weights and 8-bit activations (the one quantization there is)")->required();
  model_cli_add(cmd, args.get(), true, model_quantize_params());
  cmd->add_option("--exclude", args->config.quantize.exclude_nodes,
                  "A node name to leave in float32 (repeat the flag for more)")
      ->allow_extra_args(false);
  return [args, int8] { return model_cli_run(*args); };
}
#else
Runner model_quantize_command_add(CLI::App& model) { return model_command_not_built(model, "quantize", "int8 quantization"); }
#endif

}  // namespace kiln::cli
