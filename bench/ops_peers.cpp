// ops_peers: kiln's image ops against the equivalent OpenCV calls, on the same inputs and the same thread count.
//
//   ops_peers [--json FILE|-] [--threads N] [--seconds S] [--mode auto|gpu|cpu] [--ops a,b]
//
// Per op and size, one image per iteration: a warm-up (the first call, then kWarmFraction * S seconds), then
// iterations for S seconds (at least 3), reported as mean ± sample stddev of the per-iteration time and as images
// per second (1 / mean), plus the process CPU time per iteration (the steadier number on a shared machine; with
// one thread it is the time of the calling thread). "kiln_over_opencv" is OpenCV's mean time ÷ kiln's (> 1: kiln
// is faster), "kiln_over_opencv_cpu" the same on CPU time. kiln runs through the public op wrappers (op_run:
// validation, placement, run) with ExecOptions.mode (default cpu) and a kiln ThreadPool of N threads (nullptr
// for 1); OpenCV runs with cv::setNumThreads(N). Outputs are preallocated and reused by both tools. An op that kiln refuses (for instance
// NotImplemented while its family is unfinished) is reported with "error" and skipped, never aborts the run.
// After timing, kiln's output is compared with OpenCV's ("check"), so that a ratio is never reported for two tools
// doing different work without it showing.
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>

#include <time.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench_common.h"
#include "apps/bench/bench_stats.h"
#include "core/thread_pool.h"
#include "kiln/device.h"
#include "kiln/exec.h"
#include "ops_peers_cases.h"

namespace {

using kiln::bench::Case;
using kiln::bench::Check;
using kiln::bench::Env;

constexpr double kWarmFraction = 0.2;   // warm-up time after the first call, as a fraction of --seconds
constexpr size_t kMaxIterations = 100000;

struct Options {
  std::string json_path;  // "-": JSON on stdout instead of the table
  std::string plot_path;
  int32_t threads = 1;
  double seconds = 1.0;
  kiln::ExecMode mode = kiln::ExecMode::kCpu;
  std::vector<std::string> ops;  // empty: all
};

// ---- timing ------------------------------------------------------------------------------------------------

struct Row {
  std::string op, tool, size;
  std::string error;           // non-empty: not measured
  std::vector<double> ms;      // wall clock, per iteration
  std::vector<double> cpu_ms;  // CPU time of the process (all threads), per iteration
  kiln::bench::Stats wall, cpu;
};

double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// fn returns an empty string on success, else the error.
Row measure(const std::string& op, const std::string& tool, const std::string& size,
            const std::function<std::string()>& fn, double seconds) {
  Row r{op, tool, size, "", {}, {}, {}, {}};
  r.error = fn();  // first call: allocations, program builds
  if (!r.error.empty()) return r;
  const auto warm = std::chrono::steady_clock::now();
  while (seconds_since(warm) < kWarmFraction * seconds) {
    r.error = fn();
    if (!r.error.empty()) return r;
  }
  const auto start = std::chrono::steady_clock::now();
  while (r.ms.size() < 3 || (seconds_since(start) < seconds && r.ms.size() < kMaxIterations)) {
    const double c0 = process_cpu_ms();
    const auto t0 = std::chrono::steady_clock::now();
    r.error = fn();
    r.ms.push_back(seconds_since(t0) * 1e3);
    r.cpu_ms.push_back(process_cpu_ms() - c0);
    if (!r.error.empty()) {
      r.ms.clear();
      return r;
    }
  }
  r.wall = kiln::bench::stats_of(r.ms);
  r.cpu = kiln::bench::stats_of(r.cpu_ms);
  return r;
}

// ---- options -----------------------------------------------------------------------------------------------

void options_add(CLI::App& app, Options& opt) {
  using kiln::bench::positive;
  app.add_option("--json", opt.json_path, "Also write the results as JSON (\"-\": JSON on stdout instead of the table)")
      ->type_name("FILE|-");
  kiln::bench::plot_option_add(app, &opt.plot_path);
  app.add_option("--threads", opt.threads,
                 "Threads for both tools (default 1): cv::setNumThreads(N), a kiln ThreadPool(N)")
      ->type_name("N")
      ->check(positive());
  app.add_option("--seconds", opt.seconds, "Timed run per op, size and tool after the warm-up (default 1.0)")
      ->type_name("S")
      ->check(positive());
  app.add_option_function<std::string>(
         "--mode", [&opt](const std::string& name) { opt.mode = kiln::exec_mode_parse(name).value(); },
         "kiln's ExecOptions.mode (default cpu)")
      ->type_name("auto|gpu|cpu")
      ->check([](const std::string& name) {
        const auto mode = kiln::exec_mode_parse(name);
        return mode.is_ok() ? std::string() : mode.status().message();
      });
  app.add_option("--ops", opt.ops,
                 "Only these ops, comma-separated: fused_preprocess quality resize_bilinear resize_area cvt_gray "
                 "warp_affine unsharp mask matte blur")
      ->type_name("a,b")
      ->delimiter(',');
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"ops_peers: kiln's image ops against the equivalent OpenCV calls", "ops_peers"};
  options_add(app, opt);
  if (const std::optional<int> code = kiln::bench::args_parse(app, argc, argv)) return *code;
  const bool table = opt.json_path != "-";
  cv::setNumThreads(opt.threads);
  std::unique_ptr<kiln::ThreadPool> pool;
  if (opt.threads > 1) pool = std::make_unique<kiln::ThreadPool>(opt.threads);
  Env env;
  env.exec.mode = opt.mode;
  env.exec.pool = pool.get();
  kiln::ExecReport report;
  env.report = &report;

  const std::string commit = kiln::bench::git_commit();
  const std::string device = kiln::bench::cpu_model();
  if (table) {
    std::printf("ops_peers: commit %s, %s, OpenCV %s, %d thread(s), kiln mode %s, %g s per op/size/tool\n",
                commit.c_str(), device.c_str(), CV_VERSION, opt.threads, kiln::exec_mode_name(opt.mode), opt.seconds);
    std::fflush(stdout);
  }

  nlohmann::json results = nlohmann::json::array();
  nlohmann::json ratios = nlohmann::json::array();
  nlohmann::json checks = nlohmann::json::array();
  if (table) {
    std::printf("\n%-17s %-20s %-7s %20s %10s %20s\n", "op", "size", "tool", "ms (mean ± sd)", "img/s",
                "CPU ms (mean ± sd)");
  }
  for (Case& c : kiln::bench::ops_peers_cases_make(env)) {
    if (!opt.ops.empty() && std::find(opt.ops.begin(), opt.ops.end(), c.op) == opt.ops.end()) continue;
    std::vector<Row> rows;
    report = kiln::ExecReport{};
    rows.push_back(measure(c.op, "kiln", c.size, [&] {
      const kiln::Status st = c.kiln_run();
      return st.is_ok() ? std::string() : st.to_string();
    }, opt.seconds));
    if (c.peer_run) {
      rows.push_back(measure(c.op, c.peer, c.size, [&] {
        try {
          c.peer_run();
        } catch (const cv::Exception& e) {
          return std::string("OpenCV: ") + e.what();
        }
        return std::string();
      }, opt.seconds));
    }
    for (const Row& r : rows) {
      nlohmann::json j{{"op", r.op}, {"tool", r.tool}, {"size", r.size}, {"threads", opt.threads}};
      if (r.tool == "kiln" && !report.backend.empty()) j["backend"] = report.backend;
      if (r.tool != "kiln") j["calls"] = c.peer_calls;
      if (r.error.empty()) {
        j["img_per_s"] = 1e3 / r.wall.mean;
        j["mean_ms"] = r.wall.mean;
        j["stddev_ms"] = r.wall.stddev;
        j["cpu_ms"] = r.cpu.mean;
        j["cpu_stddev_ms"] = r.cpu.stddev;
        j["iterations"] = r.ms.size();
      } else {
        j["error"] = r.error;
      }
      results.push_back(j);
      if (table) {
        if (r.error.empty()) {
          std::printf("%-17s %-20s %-7s %10.3f ± %7.3f %10.1f %10.3f ± %7.3f\n", r.op.c_str(), r.size.c_str(),
                      r.tool.c_str(), r.wall.mean, r.wall.stddev, 1e3 / r.wall.mean, r.cpu.mean, r.cpu.stddev);
        } else {
          std::printf("%-17s %-20s %-7s skipped: %s\n", r.op.c_str(), r.size.c_str(), r.tool.c_str(), r.error.c_str());
        }
        std::fflush(stdout);
      }
    }
    if (rows.size() == 2 && rows[0].error.empty() && rows[1].error.empty()) {
      ratios.push_back({{"op", c.op},
                        {"size", c.size},
                        {"kiln_over_opencv", rows[1].wall.mean / rows[0].wall.mean},
                        {"kiln_over_opencv_cpu", rows[1].cpu.mean / rows[0].cpu.mean}});
      if (c.check) {
        const Check k = c.check();
        checks.push_back({{"op", c.op}, {"size", c.size}, {"kind", k.kind}, {"value", k.value}});
      }
    }
  }

  if (table) {
    std::printf("\n%-17s %-20s %14s %14s   %s\n", "op", "size", "kiln ÷ opencv", "(CPU time)", "check (kiln vs opencv)");
    for (const auto& q : ratios) {
      std::string check;
      for (const auto& k : checks) {
        if (k["op"] == q["op"] && k["size"] == q["size"]) {
          char buf[96];
          std::snprintf(buf, sizeof buf, "%s %.3g", k["kind"].get<std::string>().c_str(), k["value"].get<double>());
          check = buf;
        }
      }
      std::printf("%-17s %-20s %13.2fx %13.2fx   %s\n", q["op"].get<std::string>().c_str(),
                  q["size"].get<std::string>().c_str(), q["kiln_over_opencv"].get<double>(),
                  q["kiln_over_opencv_cpu"].get<double>(), check.c_str());
    }
  }

  if (!opt.json_path.empty() || !opt.plot_path.empty()) {
    nlohmann::json out{{"commit", commit},
                       {"device", device},
                       {"threads", opt.threads},
                       {"mode", kiln::exec_mode_name(opt.mode)},
                       {"opencv_version", CV_VERSION},
                       {"seconds", opt.seconds},
                       {"warmup_s", kWarmFraction * opt.seconds},
                       {"results", results},
                       {"ratios", ratios},
                       {"checks", checks}};
    if (kiln::bench::plot_write(out, opt.plot_path, "ops_peers: images/s, kiln and OpenCV") != 0) return 1;
    if (opt.json_path.empty()) return 0;
    if (opt.json_path == "-") {
      std::printf("%s\n", out.dump(2).c_str());
    } else {
      std::ofstream f(opt.json_path);
      f << out.dump(2) << "\n";
      if (!f) {
        std::fprintf(stderr, "ops_peers: cannot write %s\n", opt.json_path.c_str());
        return 1;
      }
      std::printf("\nwrote %s\n", opt.json_path.c_str());
    }
  }
  return 0;
}
