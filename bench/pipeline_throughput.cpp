// Pipeline overhead: a 3-stage pipeline whose middle stage is the slowest (busy-waits a fixed cost per
// item, one worker) against that stage's function run alone in a loop. A pipeline that overlaps its
// stages well runs at the speed of its slowest stage: ratio close to 1.
//
//   pipeline_throughput [--items N] [--cost-us C] [--light-frac F] [--reps R] [--unordered] [--table]
// The two outer stages cost F x C each (default 0.02): the pipeline needs 1 + 2F cores in all, so on a
// machine with fewer free cores the ratio measures the load, not the pipeline (load is printed too).
// Prints one JSON object: {"pipeline_items_per_s":..,"slowest_stage_items_per_s":..,"ratio":..,...}
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "apps/bench/bench_stats.h"
#include "pipeline/pipeline.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Payload {
  int64_t id = 0;
  uint64_t acc = 0;
};

// Spins for `ns` of wall time (the stage's "work"); touches the payload so it is not optimized away.
void busy_wait(Payload& p, int64_t ns) {
  const auto until = Clock::now() + std::chrono::nanoseconds(ns);
  uint64_t x = p.acc + static_cast<uint64_t>(p.id);
  while (Clock::now() < until) x = x * 6364136223846793005ull + 1442695040888963407ull;
  p.acc = x;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

int main(int argc, char** argv) {
  int64_t items = 2500;
  int64_t cost_ns = 200'000;
  int reps = 3;
  bool ordered = true;
  bool table = false;
  double light_frac = 0.02;
  CLI::App app{"pipeline_throughput: a 3-stage pipeline against its slowest stage alone; prints one JSON object",
               "pipeline_throughput"};
  app.add_option("--items", items, "Items per run (default 2500)")->type_name("N");
  app.add_option_function<double>(
         "--cost-us", [&](double us) { cost_ns = static_cast<int64_t>(us * 1000.0); },
         "Cost of the slow stage per item in microseconds (default 200)")
      ->type_name("C");
  app.add_option("--light-frac", light_frac, "Cost of each outer stage as a fraction of the slow one (default 0.02)")
      ->type_name("F");
  app.add_option_function<int>("--reps", [&](int r) { reps = std::max(1, r); }, "Timed repetitions (default 3)")
      ->type_name("R");
  app.add_flag_callback("--unordered", [&] { ordered = false; }, "Let items leave the pipeline out of order");
  app.add_flag("--table", table, "Print the pipeline's per-stage statistics on stderr");
  if (const std::optional<int> code = kiln::bench::args_parse(app, argc, argv)) return *code;
  const auto light_ns = static_cast<int64_t>(static_cast<double>(cost_ns) * light_frac);  // outer stages, 2 workers each

  kiln::Pipeline<Payload> pipeline;
  auto stage = [](int64_t ns) {
    return [ns](Payload& p) {
      busy_wait(p, ns);
      return kiln::Status::ok();
    };
  };
  if (!pipeline.add_stage({"decode", 2, 8}, stage(light_ns)).is_ok() ||
      !pipeline.add_stage({"slow", 1, 8}, stage(cost_ns)).is_ok() ||
      !pipeline.add_stage({"encode", 2, 8}, stage(light_ns)).is_ok()) {
    return 1;
  }
  kiln::RunOptions options;
  options.ordered = ordered;
  options.sink_queue_capacity = 8;

  std::vector<double> alone_rates;
  std::vector<double> pipeline_rates;
  std::string last_table;
  for (int r = -1; r < reps; ++r) {  // r = -1: warmup, not recorded
    // The slowest stage's function alone, on one thread.
    Payload p;
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < items; ++i) {
      p.id = i;
      busy_wait(p, cost_ns);
    }
    const double alone = static_cast<double>(items) / seconds_since(t0);

    int64_t next = 0;
    uint64_t sink_acc = 0;
    const auto t1 = Clock::now();
    const kiln::Status st = pipeline.run(
        [&]() -> std::optional<Payload> {
          if (next >= items) return std::nullopt;
          return Payload{next++, 0};
        },
        [&](Payload&& x) {
          sink_acc += x.acc;
          return kiln::Status::ok();
        },
        options);
    const double piped = static_cast<double>(items) / seconds_since(t1);
    if (!st.is_ok()) {
      std::fprintf(stderr, "pipeline failed: %s\n", st.to_string().c_str());
      return 1;
    }
    if (r >= 0) {
      alone_rates.push_back(alone);
      pipeline_rates.push_back(piped);
    }
    last_table = kiln::pipeline_stats_table(pipeline.stats());
    if (sink_acc == 42) std::fprintf(stderr, " ");  // keep sink_acc alive
  }
  const kiln::bench::Stats a = kiln::bench::stats_of(alone_rates);
  const kiln::bench::Stats b = kiln::bench::stats_of(pipeline_rates);
  if (table) std::fprintf(stderr, "%s", last_table.c_str());
  double load = -1.0;
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = -1.0;
    std::fclose(f);
  }
  std::printf(
      "{\"pipeline_items_per_s\":%.1f,\"slowest_stage_items_per_s\":%.1f,\"ratio\":%.4f,"
      "\"pipeline_stddev\":%.1f,\"slowest_stage_stddev\":%.1f,\"items\":%lld,\"cost_us\":%.3f,\"light_frac\":%.3f,"
      "\"reps\":%d,\"ordered\":%s,\"stages\":[\"decode x2\",\"slow x1\",\"encode x2\"],\"hardware_threads\":%u,"
      "\"loadavg_1m\":%.2f}\n",
      b.mean, a.mean, b.mean / a.mean, b.stddev, a.stddev, static_cast<long long>(items),
      static_cast<double>(cost_ns) / 1000.0, light_frac, reps, ordered ? "true" : "false",
      std::thread::hardware_concurrency(), load);
  return 0;
}
