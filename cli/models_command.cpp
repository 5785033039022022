// kiln models: the packaged models (name, task, input and outputs, size, licence, source package).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#if KILN_HAS_ORT
#include "kiln/infer.h"
#endif

namespace kiln::cli {

#if KILN_HAS_ORT
namespace {

nlohmann::json model_json(const PackagedModel& m) {
  nlohmann::json outputs = nlohmann::json::array();
  for (const auto& o : m.outputs) outputs.push_back({{"name", o.name}, {"meaning", o.meaning}});
  return {{"name", m.name},
          {"task", m.task},
          {"file", m.file},
          {"bytes", m.bytes},
          {"sha256", m.sha256},
          {"licence", m.licence},
          {"source", m.source},
          {"input",
           {{"name", m.input.name}, {"layout", m.input.layout}, {"width", m.input.width}, {"height", m.input.height},
            {"bgr", m.input.bgr}, {"scale", m.input.scale}, {"mean", m.input.mean}, {"std", m.input.std}}},
          {"outputs", outputs}};
}

std::string input_text(const ModelInput& in) {
  return in.name + ": N x " + (in.layout == "nhwc" ? std::to_string(in.height) + " x " + std::to_string(in.width) + " x 3"
                                                   : "3 x " + std::to_string(in.height) + " x " + std::to_string(in.width)) +
         (in.bgr ? " BGR" : " RGB");
}

}  // namespace
#endif

Runner models_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("models", "List the packaged models (for kiln infer --model NAME)");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON");
  return [json]() -> int {
#if KILN_HAS_ORT
    auto models = packaged_models();
    if (!models.is_ok()) return exit_with(models.status());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& m : models.value()) out.push_back(model_json(m));
    if (*json) {
      std::printf("%s\n", out.dump(2).c_str());
      return 0;
    }
    for (const auto& m : models.value()) {
      std::printf("%-16s %s\n", m.name.c_str(), m.task.c_str());
      std::printf("  input    %s\n", input_text(m.input).c_str());
      for (const auto& o : m.outputs) std::printf("  output   %s: %s\n", o.name.c_str(), o.meaning.c_str());
      std::printf("  file     %s (%.1f MB)\n  licence  %s\n  source   npm %s\n", m.file.c_str(), m.bytes / 1e6,
                  m.licence.c_str(), m.source.c_str());
    }
    return 0;
#else
    return exit_with(Status(Errc::kNotImplemented, "this kiln is built without ONNX Runtime (see make deps)"));
#endif
  };
}

}  // namespace kiln::cli
