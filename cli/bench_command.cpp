#include "cli/bench_commands.h"

namespace kiln::cli {

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
