// kiln bench ops: its options; the measurement and its table are bench::ops_bench_run (src/apps/bench/ops_bench.h).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "apps/bench/ops_bench.h"
#include "apps/bench/ops_workload.h"
#include "cli/bench_commands.h"

namespace kiln::cli {

namespace {

struct OpsFlags {
  bench::OpsBenchSettings settings;
  bool json = false;
  std::string plot;
};

int bench_ops(const OpsFlags& f) {
  const bench::TableLine table = [](const std::string& line) {
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
  };
  auto out = bench::ops_bench_run(f.settings, f.json ? bench::TableLine() : table);
  if (!out.is_ok()) return exit_with(out.status());
  if (f.json) std::printf("%s\n", out.value().dump(2).c_str());
  return bench_plot_finish(out.value(), f.plot, "kiln bench ops: images/s per op, size, backend and batch size");
}

}  // namespace

Runner bench_ops_command_add(CLI::App& bench) {
  auto* ops = bench.add_subcommand("ops", "Image-op time per op, image size, backend and batch size");
  auto f = std::make_shared<OpsFlags>();
  bench::OpsBenchSettings& s = f->settings;
  ops->add_option("--ops", s.ops, "Ops, comma-separated (default all: " + bench::workload_op_names_text() + ")")
      ->delimiter(',');
  bench_sizes_option_add(ops, "--sizes", &s.sizes);
  ops->add_option("--batch-sizes", s.batch_sizes, "Batch sizes (default 1,8,32)")->delimiter(',');
  ops->add_option("--iterations", s.iterations, "Timed runs per op, size, backend and batch (default 10)");
  ops->add_option("--mode", s.mode, "auto: every available backend; gpu: GPU backends only; cpu: the CPU only");
  ops->add_option("--resident", s.resident,
                  "host: GPU backends take pageable host batches (copies timed); pinned: host batches in the "
                  "backend's pinned (CUDA) or mapped (OpenCL) memory, with the upload-bound images/s; device: "
                  "batches already in device memory, as PyTorch and CV-CUDA hold them (CUDA; the kernels alone)")
      ->check(CLI::IsMember({"host", "pinned", "device"}));
  ops->add_option("--threads", s.threads, "CPU backend threads (default: all)");
  ops->add_flag("--json", f->json, "Print JSON");
  bench_plot_option_add(ops, &f->plot);
  return [f] { return bench_ops(*f); };
}

}  // namespace kiln::cli
