// kiln faces: detect, align, embed, judge and dedup the faces of photos (the faces job); one row per kept face in
// the output, a JSON line per face and per unreadable image, and a summary with per-stage times and placement.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/job_cli.h"
#if KILN_HAS_FACES
#include "kiln/apps/faces.h"
#endif

namespace kiln::cli {

#if KILN_HAS_FACES
Runner faces_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("faces", "Find, align, embed (512-D), judge and dedup the faces of photos");
  const Runner search = faces_search_command_add(*cmd);
  auto inputs = std::make_shared<InputArgs>();
  inputs->add_to(cmd);
  auto quiet = std::make_shared<bool>(false);
  cmd->add_flag("-q,--quiet", *quiet, "No progress output");
  auto flags = std::make_shared<CliParams>(cmd, faces_job_params(), std::map<std::string, std::string>{{"output", "-o"}});
  return [cmd, search, inputs, quiet, flags] {
    if (cmd->got_subcommand("search")) return search();
    FacesJobConfig config;
    if (Status s = job_configure(*flags, &config, &config.exec, std::nullopt, *quiet); !s.is_ok()) {
      return exit_with(s);
    }
    auto stages = face_stage_modes(config.exec.mode, env_lookup_process);
    if (!stages.is_ok()) return exit_with(stages.status());
    config.stages = stages.value();
    const bool verbose = !*quiet;
    const auto on_record = [](const FaceRecord& r) {
      if (!r.error.empty()) print_skipped(r.error);
    };
    const auto on_progress = [verbose](int64_t done, int64_t total) {
      if (verbose) {
        std::fprintf(stderr, "Processed %lld/%lld inputs\n", static_cast<long long>(done), static_cast<long long>(total));
      }
    };
    const LogFn log = [verbose](const std::string& line) {
      if (verbose || line.rfind("kiln: warning:", 0) == 0) std::fprintf(stderr, "%s\n", line.c_str());
    };
    auto result = faces_job_run(config, ImageInputs{inputs->paths(), {}}, on_record, on_progress, log);
    if (!result.is_ok()) return exit_with(result.status());
    const FacesJobSummary& s = result.value();
    std::printf("Images: %lld, with faces %lld, unreadable %lld (skipped)\n", static_cast<long long>(s.images),
                static_cast<long long>(s.images_with_faces), static_cast<long long>(s.unreadable));
    std::printf("Faces: %lld found, %lld written (%lld accepted), %lld duplicates dropped\n",
                static_cast<long long>(s.faces), static_cast<long long>(s.written), static_cast<long long>(s.accepted),
                static_cast<long long>(s.duplicates));
    print_time(s.seconds, s.images - s.unreadable);
    std::printf("Stages: waiting for decode %.2f s, detect+align+embed+quality %.2f s, write %.2f s\n",
                s.decode_seconds,
                s.analyze_seconds, s.write_seconds);
    std::printf("Detection: %s\nEmbedding: %s\nEnhancement: %s\nQuality: %s\nBatch memory: %s\n",
                s.stages.detection.c_str(), s.stages.embedding.c_str(), s.stages.enhancement.c_str(),
                s.stages.quality.c_str(), s.stages.batch_memory.c_str());
    if (!config.output.empty()) std::printf("Written: %s\n", config.output.c_str());
    if (!config.jsonl.empty()) std::printf("JSON lines: %s\n", config.jsonl.c_str());
    return 0;
  };
}
#else
Runner faces_command_add(CLI::App& app) {
  app.add_subcommand("faces", "Find and embed faces (this kiln is built without ONNX Runtime or faiss)")->allow_extras();
  return [] {
    return exit_with(Status(Errc::kNotImplemented, "this kiln is built without ONNX Runtime or faiss (see make deps)"));
  };
}
#endif

}  // namespace kiln::cli
