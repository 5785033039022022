// kiln preprocess: decode, resize and normalize images into one (N, C, H, W) or (N, H, W, C) float32/float16
// tensor in a .npy or .h5 file (the preprocess job); unreadable inputs are skipped and reported.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/job_cli.h"
#include "kiln/apps/images.h"

namespace kiln::cli {

Runner preprocess_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("preprocess", "Decode, resize and normalize images into one .npy/.h5 tensor");
  auto inputs = std::make_shared<InputArgs>();
  inputs->add_to(cmd);
  auto quiet = std::make_shared<bool>(false);
  cmd->add_flag("-q,--quiet", *quiet, "No progress output");
  auto flags = std::make_shared<CliParams>(cmd, preprocess_job_params(), std::map<std::string, std::string>{{"output", "-o"}});
  return [inputs, quiet, flags] {
    PreprocessJobConfig config;
    if (Status s = job_configure(*flags, &config, &config.exec, OpKind::kPreprocess, *quiet); !s.is_ok()) {
      return exit_with(s);
    }
    if (config.output.empty()) return exit_with(invalid_argument("--output is required"));
    const JobEvents<ImageRecord> events = file_job_events(*quiet);
    auto result = preprocess_job_run(config, ImageInputs{inputs->paths(), {}}, nullptr, events);
    if (!result.is_ok()) return exit_with(result.status());
    const PreprocessJobSummary& s = result.value();
    std::printf("Preprocessed %lld images, %lld unreadable (skipped)\n", static_cast<long long>(s.written),
                static_cast<long long>(s.unreadable));
    print_time(s.seconds, s.written);
    print_backend(s.backend, s.placement);
    print_fallbacks(s.fallbacks, s.fallback_events);
    std::string shape = "(" + std::to_string(s.written);
    for (int64_t d : s.item_shape) shape += ", " + std::to_string(d);
    std::printf("Output: %s %s) %s\n", config.output.c_str(), shape.c_str(), pixel_type_name(config.dtype));
    return 0;
  };
}

}  // namespace kiln::cli
