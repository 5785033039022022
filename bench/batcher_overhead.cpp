// Per-request overhead of the dynamic batcher: enqueue + dispatch + complete, in µs.
// Two modes: "inline" (one thread enqueues a batch then forms it) and "threaded" (producers on
// their own threads, one consumer blocking in next_batch with the steady clock).
// Output: one JSON object, e.g. {"per_request_us": 0.21, "requests": 1000000, ...}.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

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

void mean_std(const std::vector<double>& xs, double* mean, double* stddev) {
  double sum = 0.0;
  for (double x : xs) sum += x;
  *mean = sum / static_cast<double>(xs.size());
  double var = 0.0;
  for (double x : xs) var += (x - *mean) * (x - *mean);
  *stddev = xs.size() > 1 ? std::sqrt(var / static_cast<double>(xs.size() - 1)) : 0.0;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t requests = 200'000;
  int repetitions = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--requests") requests = std::max<int64_t>(1, std::atoll(argv[i + 1]));
    if (flag == "--repetitions") repetitions = std::max(1, std::atoi(argv[i + 1]));
  }
  const int producers = 2;
  inline_us(requests / 10 + 1);  // warm-up
  threaded_us(requests / 10 + 1, producers);
  std::vector<double> inline_runs;
  std::vector<double> threaded_runs;
  for (int r = 0; r < repetitions; ++r) {
    inline_runs.push_back(inline_us(requests));
    threaded_runs.push_back(threaded_us(requests, producers));
  }
  double inline_mean = 0, inline_std = 0, threaded_mean = 0, threaded_std = 0;
  mean_std(inline_runs, &inline_mean, &inline_std);
  mean_std(threaded_runs, &threaded_mean, &threaded_std);
  // The headline figure is the threaded one (real locking and wake-ups), the worse of the two.
  const double headline = std::max(inline_mean, threaded_mean);
  std::printf(
      "{\"per_request_us\": %.4f, \"requests\": %lld, \"repetitions\": %d, \"target_us\": 20, "
      "\"inline_us_mean\": %.4f, \"inline_us_std\": %.4f, \"threaded_us_mean\": %.4f, \"threaded_us_std\": %.4f, "
      "\"producers\": %d, \"hardware_threads\": %u}\n",
      headline, static_cast<long long>(requests), repetitions, inline_mean, inline_std, threaded_mean, threaded_std,
      producers, std::thread::hardware_concurrency());
  return headline <= 20.0 ? 0 : 1;
}
