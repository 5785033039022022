// kiln infer: run an ONNX image model (a packaged model's name or a file) over images, batched, and write its raw
// outputs in input order (the infer job); unreadable inputs are skipped and reported.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/job_cli.h"
#if KILN_HAS_ORT
#include "kiln/apps/infer.h"
#endif

namespace kiln::cli {

#if KILN_HAS_ORT
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t d = 0; d < shape.size(); ++d) text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + ")";
}

}  // namespace

Runner infer_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("infer", "Run an ONNX model (kiln models, or a file) over images");
  auto inputs = std::make_shared<InputArgs>();
  inputs->add_to(cmd);
  auto quiet = std::make_shared<bool>(false);
  cmd->add_flag("-q,--quiet", *quiet, "No progress output");
  auto flags = std::make_shared<CliParams>(cmd, infer_job_params(), std::map<std::string, std::string>{{"output", "-o"}});
  return [inputs, quiet, flags] {
    InferJobConfig config;
    if (Status s = job_configure(*flags, &config, &config.exec, OpKind::kPreprocess, *quiet); !s.is_ok()) {
      return exit_with(s);
    }
    if (config.output.empty()) return exit_with(invalid_argument("--output is required"));
    const JobEvents<ImageRecord> events = file_job_events(*quiet);
    auto result = infer_job_run(config, ImageInputs{inputs->paths(), {}}, events);
    if (!result.is_ok()) return exit_with(result.status());
    const InferJobSummary& s = result.value();
    std::printf("Inferred %lld images, %lld unreadable (skipped)\n", static_cast<long long>(s.written),
                static_cast<long long>(s.unreadable));
    print_time(s.seconds, s.written);
    std::printf("Provider: %s (%s); preprocess: %s; model input: %s\n", s.report.provider.c_str(),
                s.report.placement.c_str(), s.preprocess.c_str(), s.model_input.c_str());
    for (const auto& f : s.report.fallbacks) std::printf("Fallback: %s\n", f.c_str());
    std::printf("Input: %s per image, at most %lld per model run%s\n", shape_text(s.input_shape).c_str(),
                static_cast<long long>(s.model_batch),
                s.report.provider == "cpu" ? " (the CPU provider's most; a bigger --batch-size is for GPUs)" : "");
    for (const auto& t : s.outputs) std::printf("Output %s: %s\n", t.name.c_str(), shape_text(t.shape).c_str());
    std::printf("Written: %s\n", config.output.c_str());
    return 0;
  };
}
#else
Runner infer_command_add(CLI::App& app) {
  app.add_subcommand("infer", "Run an ONNX model over images (this kiln is built without ONNX Runtime)")
      ->allow_extras();
  return [] { return exit_with(Status(Errc::kNotImplemented, "this kiln is built without ONNX Runtime (see make deps)")); };
}
#endif

}  // namespace kiln::cli
