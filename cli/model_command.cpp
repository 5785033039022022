// kiln model: lower-precision copies of ONNX models (convert --fp16, quantize --int8), each checked against the
// original on real frames and timed on ONNX Runtime's CPU provider.
#include <cstdio>
#include <string>

#include "cli/model_cli.h"

namespace kiln::cli {

#if KILN_HAS_ONNX
namespace {

void summary_print(const ModelPrecisionSummary& s) {
  const ModelCompareReport& c = s.compare;
  const bool fp16 = s.precision == ModelPrecision::kFp16;
  std::printf("Model: %s (%.1f KB) -> %s (%.1f KB, %s)\n", s.model.c_str(), s.bytes_before / 1e3, s.output.c_str(),
              s.bytes_after / 1e3, fp16 ? "fp16 weights" : "int8 QDQ");
  if (fp16) {
    std::printf("Weights: %lld initializers stored as float16 (each Cast to float32), %lld kept float32\n",
                static_cast<long long>(s.fp16.converted), static_cast<long long>(s.fp16.kept_fp32));
  } else {
    const ModelQuantizeReport& q = s.quantize;
    std::string types;
    for (const auto& t : q.float_op_types) types += (types.empty() ? "" : ", ") + t;
    std::printf(
        "Quantized: %lld nodes on integers, %lld left in float32 (%s); %lld int8 weights; %lld Q + %lld DQ "
        "nodes\n",
        static_cast<long long>(q.quantized_nodes), static_cast<long long>(q.float_nodes),
        types.empty() ? "none" : types.c_str(), static_cast<long long>(q.weights),
        static_cast<long long>(q.quantize_nodes), static_cast<long long>(q.dequantize_nodes));
    std::printf("Rewrites: %lld float folds, %lld Relu/Clip absorbed; opset %lld -> %lld; output head in float32: %lld "
                "nodes\n",
                static_cast<long long>(q.folded), static_cast<long long>(q.removed_activations),
                static_cast<long long>(q.opset_from), static_cast<long long>(q.opset_to),
                static_cast<long long>(q.head_nodes));
  }
  std::printf("Frames: %lld%s (%s)%s\n", static_cast<long long>(s.frames), s.random_inputs ? " random inputs" : "",
              s.input_spec.c_str(),
              s.frames_skipped ? (", " + std::to_string(s.frames_skipped) + " unreadable skipped").c_str() : "");
  std::printf("Accuracy vs fp32 (%s): max |diff| %.6g, mean |diff| %.6g\n", c.output.c_str(), c.max_abs_diff,
              c.mean_abs_diff);
  if (c.mask) {
    std::printf("Mask IoU at 0.5: mean %.4f, min %.4f (%lld frames with a mask); pixels decided differently %.3f%%\n",
                c.mask_iou_mean, c.mask_iou_min, static_cast<long long>(c.mask_items), 100.0 * c.mask_pixels_differ);
  }
  if (c.embedding) std::printf("Cosine: mean %.5f, min %.5f\n", c.cosine_mean, c.cosine_min);
  std::printf("Speed, CPU provider, batch 1, %s threads: fp32 %.2f ms, %s %.2f ms (x%.2f)\n",
              c.threads > 0 ? std::to_string(c.threads).c_str() : "all", c.reference_ms, fp16 ? "fp16" : "int8",
              c.candidate_ms, c.speedup);
  std::printf("Written: %s\n", s.output.c_str());
}

}  // namespace

void model_cli_add(CLI::App* cmd, ModelCliArgs* args, bool calibrate_required,
                   const ParamTable<ModelPrecisionConfig>& params) {
  ModelPrecisionConfig& c = args->config;
  cmd->add_option("model", c.model, "A packaged model's name (kiln models) or an .onnx file")->required();
  auto* frames =
      cmd->add_option("--calibrate", c.calibrate,
                      "Frames: a video file, an image, a folder of images or an @list file (repeat the flag for more)")
          ->allow_extra_args(false);
  if (calibrate_required) frames->required();
  cmd->add_flag("--json", args->json, "Print the summary as JSON");
  args->flags = std::make_unique<CliParams>(cmd, params, std::map<std::string, std::string>{{"output", "-o"}});
}

int model_cli_run(ModelCliArgs& args) {
  if (Status s = args.flags->apply(&args.config); !s.is_ok()) return exit_with(s);
  auto result = model_precision_job_run(args.config);
  if (!result.is_ok()) return exit_with(result.status());
  if (args.json) {
    std::printf("%s\n", result.value().json().c_str());
  } else {
    summary_print(result.value());
  }
  return 0;
}
#else
Runner model_command_not_built(CLI::App& model, const char* name, const char* summary) {
  model.add_subcommand(name, std::string(summary) + " (this kiln is built without libonnx or ONNX Runtime)")
      ->allow_extras();
  const std::string message = std::string("kiln model ") + name +
                              " is not built: it needs ONNX Runtime and libonnx (apt-get install libonnx-dev "
                              "libprotobuf-dev; make deps)";
  return [message] { return exit_with(Status(Errc::kNotImplemented, message)); };
}
#endif

Runner model_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("model", "Make fp16 or int8 copies of ONNX models, checked and timed");
  cmd->require_subcommand(1);
  const Runner convert = model_convert_command_add(*cmd);
  const Runner quantize = model_quantize_command_add(*cmd);
  return [cmd, convert, quantize] { return cmd->got_subcommand("convert") ? convert() : quantize(); };
}

}  // namespace kiln::cli
