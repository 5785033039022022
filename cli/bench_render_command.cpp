// kiln bench render: per backend and batch size, kernel-only time (device events on GPUs; the render call on
// the CPU) and end-to-end images/s (upload + kernel + download into host memory), with estimates for 85k, 1M
// and 40M images. The predecessor's test_gpu_performance.py, measured instead of extrapolated from one run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "apps/bench/bench_stats.h"
#include "cli/bench_commands.h"
#include "cli/params_cli.h"
#include "core/buffer_pool.h"
#include "core/thread_pool.h"
#include "kiln/apps/render.h"
#include "kiln/device.h"
#include "kiln/ops/render.h"
#include "kiln/version.h"

namespace kiln::cli {

namespace {

// What is rendered: the render op's declared settings and the window length.
struct BenchSettings {
  RenderParams render;
  WindowSpec windows;
};

const ParamTable<BenchSettings>& bench_settings_params() {
  static const ParamTable<BenchSettings> table = [] {
    ParamTable<BenchSettings> t;
    t.include(render_params(), [](BenchSettings& s) -> RenderParams& { return s.render; });
    t.include(window_params(), [](BenchSettings& s) -> WindowSpec& { return s.windows; }, {"seq_len"});
    return t;
  }();
  return table;
}

struct BenchFlags {
  BenchSettings settings;
  std::vector<int64_t> batch_sizes{1, 10, 100, 1000, 5000};
  double seconds = 1.0;  // per (backend, batch size)
  int32_t threads = 0;
  bool json = false;
  std::string plot;
};

Result<nlohmann::json> bench_one(Backend& backend, const RenderParams& params, const Series& series, int64_t batch,
                                 const BenchFlags& f, ThreadPool* pool) {
  std::vector<int64_t> starts(static_cast<size_t>(batch));
  const auto seq_len = static_cast<int32_t>(f.settings.windows.seq_len);
  for (int64_t i = 0; i < batch; ++i) starts[static_cast<size_t>(i)] = i % (series.rows - seq_len + 1);
  const WindowBatch windows{series.values.data(), series.channels, starts.data(), batch, seq_len};
  const int32_t channels = render_image_channels(params);  // 3 with --color
  const size_t image_bytes =
      static_cast<size_t>(params.width) * params.height * channels * pixel_type_size(params.dtype);
  KILN_TRY_ASSIGN(PoolBlock host, backend.host_acquire(image_bytes * static_cast<size_t>(batch)));
  const BatchView out{reinterpret_cast<void*>(host.handle), batch, params.width, params.height, channels, params.dtype,
                      static_cast<int64_t>(image_bytes)};
  std::vector<double> seconds;
  std::vector<double> kernel_ms;
  const RenderCall call(params, windows, out);
  Status status = op_validate(call.call());
  if (status.is_ok()) status = backend.run(call.call(), RunContext{pool});  // warm-up: program build, first allocations
  const auto start = std::chrono::steady_clock::now();
  while (status.is_ok() && (seconds.size() < 3 || std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < f.seconds)) {
    OpTimings timings;
    const auto t0 = std::chrono::steady_clock::now();
    status = backend.run(call.call(), RunContext{pool, nullptr, &timings});
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    kernel_ms.push_back(backend.is_gpu() ? timings.kernel_ms : seconds.back() * 1e3);
    if (seconds.size() >= 1000) break;
  }
  backend.host_release(host);
  KILN_TRY(status);
  const bench::Stats e2e = bench::stats_of(seconds), kernel = bench::stats_of(kernel_ms);
  const double img_per_s = static_cast<double>(batch) / e2e.mean;
  nlohmann::json row;
  row["backend"] = backend.name();
  const auto devices = backend.devices();
  row["device"] = devices.empty() ? "" : devices.front().name;
  row["batch_size"] = batch;
  row["iterations"] = seconds.size();
  row["e2e_ms_mean"] = e2e.mean * 1e3;
  row["e2e_ms_std"] = e2e.stddev * 1e3;
  row["kernel_ms_mean"] = kernel.mean;
  row["kernel_ms_std"] = kernel.stddev;
  row["img_per_s"] = img_per_s;
  row["kernel_img_per_s"] = static_cast<double>(batch) / (kernel.mean / 1e3);
  row["d2h_gb_per_s"] = static_cast<double>(image_bytes) * img_per_s / 1e9;
  row["estimate_s"] = {{"85k", 85887 / img_per_s}, {"1M", 1e6 / img_per_s}, {"40M", 4e7 / img_per_s}};
  return row;
}

int bench_render(const BenchFlags& f) {
  const RenderParams& params = f.settings.render;
  const int64_t largest = *std::max_element(f.batch_sizes.begin(), f.batch_sizes.end());
  const Series series = series_demo(std::max<int64_t>(largest, 1000) + f.settings.windows.seq_len);
  ThreadPool pool(f.threads);
  nlohmann::json out;
  out["kiln_version"] = KILN_VERSION_STRING;
  for (const auto& entry : bench_settings_params().entries()) {
    std::visit([&](const auto& value) { out[entry.spec.name] = value; }, entry.get(&f.settings));
  }
  out["cpu_threads"] = pool.size();
  out["results"] = nlohmann::json::array();
  if (!f.json) {
    std::printf("%-8s %-28s %6s %10s %10s %12s %12s %9s %9s %9s\n", "backend", "device", "batch", "e2e ms", "kernel ms",
                "img/s", "kernel img/s", "85k s", "1M s", "40M h");
  }
  for (const auto& backend : BackendRegistry::instance().backends()) {
    for (int64_t batch : f.batch_sizes) {
      auto row = bench_one(*backend, params, series, batch, f, backend->is_gpu() ? nullptr : &pool);
      if (!row.is_ok()) {
        std::fprintf(stderr, "kiln: %s batch %lld: %s\n", backend->name().c_str(), static_cast<long long>(batch),
                     row.status().message().c_str());
        continue;
      }
      const auto& r = row.value();
      if (!f.json) {
        std::printf("%-8s %-28.28s %6lld %10.2f %10.2f %12.0f %12.0f %9.1f %9.0f %9.2f\n", backend->name().c_str(),
                    r["device"].get<std::string>().c_str(), static_cast<long long>(batch), r["e2e_ms_mean"].get<double>(),
                    r["kernel_ms_mean"].get<double>(), r["img_per_s"].get<double>(), r["kernel_img_per_s"].get<double>(),
                    r["estimate_s"]["85k"].get<double>(), r["estimate_s"]["1M"].get<double>(),
                    r["estimate_s"]["40M"].get<double>() / 3600.0);
        std::fflush(stdout);
      }
      out["results"].push_back(r);
    }
  }
  if (f.json) std::printf("%s\n", out.dump(2).c_str());
  return bench_plot_finish(out, f.plot, "kiln bench render: images/s per backend and batch size");
}

}  // namespace

Runner bench_render_command_add(CLI::App& bench) {
  auto* render = bench.add_subcommand("render", "Render throughput per backend and batch size");
  auto f = std::make_shared<BenchFlags>();
  auto flags = std::make_shared<CliParams>(render, bench_settings_params());
  render->add_option("--batch-sizes", f->batch_sizes, "Batch sizes (default 1 10 100 1000 5000)");
  render->add_option("--seconds", f->seconds, "Time per backend and batch size (at least 3 iterations)");
  render->add_option("--threads", f->threads, "CPU backend threads (default: all)");
  render->add_flag("--json", f->json, "Print JSON");
  bench_plot_option_add(render, &f->plot);
  return [f, flags] {
    if (Status s = flags->apply(&f->settings); !s.is_ok()) return exit_with(s);
    if (Status s = render_validate(f->settings.render, WindowBatch{nullptr, chart_style_draws_bars(f->settings.render.style) ? 4 : 1,
                                                                   nullptr, 0, static_cast<int32_t>(f->settings.windows.seq_len)});
        !s.is_ok()) {
      return exit_with(s);
    }
    return bench_render(*f);
  };
}

}  // namespace kiln::cli
