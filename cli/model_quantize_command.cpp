// kiln model quantize --int8 --calibrate FRAMES MODEL -o OUT.onnx: static QDQ quantization, calibrated on frames.
#include <memory>

#include "cli/model_cli.h"

namespace kiln::cli {

#if KILN_HAS_ONNX
Runner model_quantize_command_add(CLI::App& model) {
  auto* cmd = model.add_subcommand("quantize", "Static int8 quantization (QDQ), calibrated on real frames");
  auto args = std::make_shared<ModelCliArgs>();
  auto int8 = std::make_shared<bool>(false);
  auto method = std::make_shared<std::string>("minmax");
  auto activations = std::make_shared<std::string>("uint8");
  auto per_tensor = std::make_shared<bool>(false);
  args->config.precision = ModelPrecision::kInt8;
  cmd->add_flag("--int8", *int8, "int8 weights and 8-bit activations (the one quantization there is)")->required();
  model_cli_add(cmd, args.get(), true);
  ModelQuantizeOptions& q = args->config.quantize;
  cmd->add_option("--method", *method, "Activation ranges: minmax, or percentile of each tensor's histogram")
      ->check(CLI::IsMember({"minmax", "percentile"}));
  cmd->add_option("--percentile", q.percentile, "With --method percentile: the share of values kept (50-100]")
      ->check(CLI::Range(50.0, 100.0));
  cmd->add_option("--activations", *activations, "Activation type: uint8 (x86 kernels) or int8")
      ->check(CLI::IsMember({"uint8", "int8"}));
  cmd->add_flag("--per-tensor", *per_tensor, "One weight scale per tensor instead of per output channel");
  cmd->add_flag("--reduce-range", q.reduce_range, "7-bit weights, for x86 CPUs without VNNI");
  cmd->add_option("--exclude", q.exclude_nodes, "A node name to leave in float32 (repeat the flag for more)")
      ->allow_extra_args(false);
  return [args, int8, method, activations, per_tensor] {
    args->config.quantize.method = *method == "percentile" ? CalibrationMethod::kPercentile : CalibrationMethod::kMinMax;
    args->config.quantize.activations_int8 = *activations == "int8";
    args->config.quantize.per_channel = !*per_tensor;
    return model_cli_run(*args);
  };
}
#else
Runner model_quantize_command_add(CLI::App& model) { return model_command_not_built(model, "quantize", "int8 quantization"); }
#endif

}  // namespace kiln::cli
