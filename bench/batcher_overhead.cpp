// Per-request overhead of the dynamic batcher: enqueue + dispatch + complete, in µs.
// Two modes: "inline" (one thread enqueues a batch then forms it) and "threaded" (producers on
// their own threads, one consumer blocking in next_batch with the steady clock).
//
//   batcher_overhead [--requests N] [--repetitions R]
// Output: one JSON object, e.g. {"per_request_us": 0.21, "requests": 1000000, ...}.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "apps/bench/bench_stats.h"
#include "pipeline/batcher.h"
#include "pipeline/clock.h"

namespace {

using kiln::BatcherConfig;
using kiln::DynamicBatcher;

struct Payload {
  int64_t id;
  int64_t data[4];
};

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

BatcherConfig bench_config() {
  BatcherConfig config;
  config.max_batch_size = 32;
  config.preferred_batch_sizes = {8, 16, 32};
  config.max_queue_delay_us = 100;
  config.priority_levels = 2;
  config.max_batch_bytes = 1 << 20;
  return config;
}

// Single thread: enqueue 32, form, complete. Pure bookkeeping cost, no contention or wake-ups.
double inline_us(int64_t requests) {
  auto batcher = std::move(DynamicBatcher<Payload>::create(bench_config())).value();
  int64_t sink = 0;
  const double start = now_s();
  for (int64_t i = 0; i < requests;) {
    for (int k = 0; k < 32 && i < requests; ++k, ++i) {
      if (!batcher->enqueue(Payload{i, {}}, 1 + static_cast<int32_t>(i & 1), 0, 256).is_ok()) std::abort();
    }
    while (auto batch = batcher->try_form_batch()) {
      sink += static_cast<int64_t>(batch->size());
      batcher->complete(*batch, 0);
    }
  }
  // Drain the tail (fewer than a preferred size) by closing.
  batcher->close();
  while (auto batch = batcher->try_form_batch()) sink += static_cast<int64_t>(batch->size());
  const double elapsed = now_s() - start;
  if (sink != requests) std::abort();
  return elapsed * 1e6 / static_cast<double>(requests);
}

// Producers + one blocking consumer on the steady clock: includes locking and wake-ups.
double threaded_us(int64_t requests, int producers) {
  auto batcher = std::move(DynamicBatcher<Payload>::create(bench_config())).value();
  int64_t consumed = 0;
  const double start = now_s();
  std::thread consumer([&] {
    for (;;) {
      auto batch = batcher->next_batch();
      if (!batch.is_ok()) break;
      consumed += static_cast<int64_t>(batch->size());
      batcher->complete(*batch, 0);
    }
  });
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (int64_t i = p; i < requests; i += producers) {
        if (!batcher->enqueue(Payload{i, {}}, 1, 0, 256).is_ok()) std::abort();
      }
    });
  }
  for (auto& t : threads) t.join();
  batcher->close();
  consumer.join();
  const double elapsed = now_s() - start;
  if (consumed != requests) std::abort();
  return elapsed * 1e6 / static_cast<double>(requests);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t requests = 200'000;
  int repetitions = 5;
  CLI::App app{"batcher_overhead: per-request overhead of the dynamic batcher; prints one JSON object",
               "batcher_overhead"};
  app.add_option_function<int64_t>(
         "--requests", [&](int64_t n) { requests = std::max<int64_t>(1, n); },
         "Requests per repetition (default 200000)")
      ->type_name("N");
  app.add_option_function<int>(
         "--repetitions", [&](int n) { repetitions = std::max(1, n); }, "Timed repetitions (default 5)")
      ->type_name("R");
  if (const std::optional<int> code = kiln::bench::args_parse(app, argc, argv)) return *code;
  const int producers = 2;
  inline_us(requests / 10 + 1);  // warm-up
  threaded_us(requests / 10 + 1, producers);
  std::vector<double> inline_runs;
  std::vector<double> threaded_runs;
  for (int r = 0; r < repetitions; ++r) {
    inline_runs.push_back(inline_us(requests));
    threaded_runs.push_back(threaded_us(requests, producers));
  }
  const kiln::bench::Stats inline_stats = kiln::bench::stats_of(inline_runs);
  const kiln::bench::Stats threaded_stats = kiln::bench::stats_of(threaded_runs);
  // The headline figure is the threaded one (real locking and wake-ups), the worse of the two.
  const double headline = std::max(inline_stats.mean, threaded_stats.mean);
  std::printf(
      "{\"per_request_us\": %.4f, \"requests\": %lld, \"repetitions\": %d, \"target_us\": 20, "
      "\"inline_us_mean\": %.4f, \"inline_us_std\": %.4f, \"threaded_us_mean\": %.4f, \"threaded_us_std\": %.4f, "
      "\"producers\": %d, \"hardware_threads\": %u}\n",
      headline, static_cast<long long>(requests), repetitions, inline_stats.mean, inline_stats.stddev,
      threaded_stats.mean, threaded_stats.stddev,
      producers, std::thread::hardware_concurrency());
  return headline <= 20.0 ? 0 : 1;
}
