// kiln bench faces: its options and where the JSON goes; the measurement is bench::faces_bench_run
// (src/apps/bench/faces_bench.h).
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "apps/bench/faces_bench.h"
#include "cli/bench_commands.h"

namespace kiln::cli {

#if KILN_HAS_FACES
namespace {

struct FacesFlags {
  bench::FacesBenchSettings settings;
  std::string json_path;
  std::string plot;
};

int bench_faces_run(const FacesFlags& f) {
  auto out = bench::faces_bench_run(f.settings, [](const std::string& line) { std::fputs(line.c_str(), stderr); });
  if (!out.is_ok()) return exit_with(out.status());
  const std::string text = out.value().dump(2);
  if (f.json_path.empty() || f.json_path == "-") {
    std::printf("%s\n", text.c_str());
  } else {
    std::ofstream(f.json_path) << text << "\n";
  }
  return bench_plot_finish(out.value(), f.plot, "kiln bench faces: images/s per operation, size and device");
}

}  // namespace

Runner bench_faces_command_add(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("faces", "The predecessor's face benchmark on real photos, GPU against CPU");
  auto f = std::make_shared<FacesFlags>();
  bench::FacesBenchSettings& s = f->settings;
  cmd->add_option("--photos", s.photos, "Face photographs (default: skimage's astronaut, matplotlib's Grace Hopper)");
  cmd->add_option("--operation", s.operations, "face_detection, image_enhancement, thumbnail_creation, quality_checks");
  bench_sizes_option_add(cmd, "--image-size", &s.sizes);
  cmd->add_option("--iterations", s.iterations, "Timed runs per point (after one warm-up)")
      ->check(CLI::Range(int64_t{1}, int64_t{100000}));
  cmd->add_option("--batch-size", s.batch_size, "Images per run")->check(CLI::Range(int64_t{1}, int64_t{4096}));
  cmd->add_option("--threads", s.threads, "CPU threads (0 = all cores)");
  auto* gpu = cmd->add_flag("--gpu", s.gpu, "Only on the GPU");
  cmd->add_flag("--no-gpu", s.no_gpu, "Only on the CPU")->excludes(gpu);
  cmd->add_option("--json", f->json_path, "Write the JSON here (default: stdout)");
  bench_plot_option_add(cmd, &f->plot);
  return [f] { return bench_faces_run(*f); };
}
#else
Runner bench_faces_command_add(CLI::App& bench) {
  bench.add_subcommand("faces", "(built without ONNX Runtime or faiss)")->allow_extras();
  return [] { return exit_with(Status(Errc::kNotImplemented, "this kiln is built without ONNX Runtime or faiss")); };
}
#endif

}  // namespace kiln::cli
