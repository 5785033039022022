// kiln bench infer: a model's latency (mean, p50, p99) and throughput per execution provider and batch size, on a
// fixed random input, warm-up excluded. The peers (OpenCV DNN, ONNX Runtime one image at a time) and the end-to-end
// job are measured by bench/infer_peers.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/bench_commands.h"
#if KILN_HAS_ORT
#include "kiln/infer.h"
#endif

namespace kiln::cli {

#if KILN_HAS_ORT
namespace {

struct BenchInferArgs {
  std::string model;
  std::vector<int64_t> batch_sizes{1, 8, 32};
  double seconds = 2.0;
  int32_t threads = 0;
  bool json = false;
  std::string plot;
};

double percentile(std::vector<double> xs, double q) {
  std::sort(xs.begin(), xs.end());
  return xs[static_cast<size_t>(std::min<double>(xs.size() - 1, q * static_cast<double>(xs.size())))];
}

nlohmann::json measure(InferSession& session, int64_t batch, double seconds) {
  std::vector<int64_t> shape;
  const std::vector<float> input = infer_random_input(session.info(), batch, 7, &shape);
  std::vector<Tensor> outputs;
  for (int i = 0; i < 2; ++i) {  // warm-up: allocations and kernel selection for this shape
    if (Status st = session.run(input, shape, &outputs); !st.is_ok()) return {{"error", st.message()}};
  }
  std::vector<double> ms;
  const auto start = std::chrono::steady_clock::now();
  while (ms.size() < 3 || std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    if (Status st = session.run(input, shape, &outputs); !st.is_ok()) return {{"error", st.message()}};
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  double total = 0;
  for (double x : ms) total += x;
  const double mean = total / static_cast<double>(ms.size());
  return {{"runs", ms.size()},
          {"latency_ms_mean", mean},
          {"latency_ms_p50", percentile(ms, 0.50)},
          {"latency_ms_p99", percentile(ms, 0.99)},
          {"images_per_s", static_cast<double>(batch) * 1e3 / mean}};
}

int bench_infer_run(const BenchInferArgs& args) {
  auto path = model_path_resolve(args.model);
  if (!path.is_ok()) return exit_with(path.status());
  nlohmann::json rows = nlohmann::json::array();
  for (const ExecMode mode : {ExecMode::kCpu, ExecMode::kGpu}) {
    InferOptions options;
    options.mode = mode;
    options.threads = args.threads;
    options.warmup_runs = 0;
    auto session = InferSession::open(path.value(), options);
    if (!session.is_ok()) {
      rows.push_back({{"model", args.model}, {"mode", exec_mode_name(mode)}, {"error", session.status().message()}});
      continue;
    }
    for (const int64_t batch : args.batch_sizes) {
      nlohmann::json row = {{"model", args.model},
                            {"mode", exec_mode_name(mode)},
                            {"provider", session.value()->report().provider},
                            {"batch_size", batch},
                            {"threads", args.threads}};
      row.update(measure(*session.value(), batch, args.seconds));
      rows.push_back(row);
      if (!args.json) {
        if (row.contains("error")) {
          std::printf("%-10s batch %4lld  error: %s\n", row["provider"].get<std::string>().c_str(),
                      static_cast<long long>(batch), row["error"].get<std::string>().c_str());
        } else {
          std::printf("%-10s batch %4lld  %8.2f ms mean  %8.2f p50  %8.2f p99  %9.1f images/s\n",
                      row["provider"].get<std::string>().c_str(), static_cast<long long>(batch),
                      row["latency_ms_mean"].get<double>(), row["latency_ms_p50"].get<double>(),
                      row["latency_ms_p99"].get<double>(), row["images_per_s"].get<double>());
        }
      }
    }
  }
  if (args.json) std::printf("%s\n", rows.dump(2).c_str());
  return bench_plot_finish(rows, args.plot, "kiln bench infer " + args.model + ": images/s per provider and batch size");
}

}  // namespace

Runner bench_infer_command_add(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("infer", "Latency and throughput of a model per execution provider and batch size");
  auto args = std::make_shared<BenchInferArgs>();
  cmd->add_option("--model", args->model, "A packaged model's name or an .onnx file")->required();
  cmd->add_option("--batch-sizes", args->batch_sizes, "Batch sizes")->delimiter(',');
  cmd->add_option("--seconds", args->seconds, "Measuring time per point");
  cmd->add_option("--threads", args->threads, "CPU provider intra-op threads (0 = all cores)");
  cmd->add_flag("--json", args->json, "Print JSON rows");
  bench_plot_option_add(cmd, &args->plot);
  return [args] { return bench_infer_run(*args); };
}
#else
Runner bench_infer_command_add(CLI::App& bench) {
  bench.add_subcommand("infer", "(built without ONNX Runtime)")->allow_extras();
  return [] { return exit_with(Status(Errc::kNotImplemented, "this kiln is built without ONNX Runtime")); };
}
#endif

}  // namespace kiln::cli
