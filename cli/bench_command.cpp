#include "cli/bench_commands.h"

#include "pictures/bench_plot.h"

namespace kiln::cli {

void bench_sizes_option_add(CLI::App* cmd, const std::string& flag, std::vector<std::string>* sizes) {
  std::vector<std::string> names;
  std::string help;
  for (const bench::BenchSize& size : bench::kBenchSizes) {
    names.emplace_back(size.name);
    help += (help.empty() ? "" : ", ") + std::string(size.name) + " (" + std::to_string(size.width) + " x " +
            std::to_string(size.height) + ")";
  }
  cmd->add_option(flag, *sizes, help + "; default all")->delimiter(',')->check(CLI::IsMember(names));
}

void bench_plot_option_add(CLI::App* cmd, std::string* path) {
  cmd->add_option("--plot", *path, "Also draw the results into this PNG (matplotlib; KILN_PYTHON names the Python)");
}

int bench_plot_finish(const nlohmann::json& results, const std::string& path, const std::string& title) {
  if (path.empty()) return 0;
  if (Status s = bench_plot_write(results, path, title); !s.is_ok()) return exit_with(s);
  std::fprintf(stderr, "Plot: %s\n", path.c_str());
  return 0;
}

Runner bench_command_add(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Measure kiln on this machine");
  bench->require_subcommand(1);
  const Runner render = bench_render_command_add(*bench);
  const Runner ops = bench_ops_command_add(*bench);
  const Runner infer = bench_infer_command_add(*bench);
  const Runner faces = bench_faces_command_add(*bench);
  const Runner segment = bench_segment_command_add(*bench);
  return [bench, render, ops, infer, faces, segment] {
    if (bench->got_subcommand("ops")) return ops();
    if (bench->got_subcommand("segment")) return segment();
    if (bench->got_subcommand("faces")) return faces();
    if (bench->got_subcommand("infer")) return infer();
    return render();
  };
}

}  // namespace kiln::cli
