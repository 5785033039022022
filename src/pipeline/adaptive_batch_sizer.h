// Picks the batch size the batcher should aim for, from observed (batch size, latency) pairs.
// Deterministic: no clock, no randomness; the same observations give the same sizes.
//
// Profiles
//   kLatency     After each window of observations at the current size, take the window's p99
//                (nearest rank). Over the target: remember the size as a ceiling and shrink to
//                the size a linear latency model predicts fits (at most size - 1). Under: grow
//                toward the model's prediction (at most x2, below the ceiling). The ceiling is
//                forgotten after `ceiling_ttl_windows` windows so the sizer re-explores.
//   kThroughput  Hill-climb over candidate sizes (powers of two up to max, or the given list)
//                on items/s = items / latency summed over a window: explore the unmeasured
//                neighbour up, then down, move to a better neighbour, else settle. Measurements
//                age out after `remeasure_windows` windows, so it keeps tracking changes.
// on_memory_pressure() halves the size at once (and caps growth at the old size).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/status.h"

namespace kiln {

enum class SizerProfile : uint8_t { kLatency = 0, kThroughput };

struct AdaptiveBatchSizerConfig {
  SizerProfile profile = SizerProfile::kLatency;
  int32_t min_batch_size = 1;
  int32_t max_batch_size = 64;
  int32_t initial_batch_size = 1;
  int64_t target_p99_ns = 50'000'000;  // kLatency: 50 ms
  int32_t window = 32;                 // observations per decision
  int32_t ceiling_ttl_windows = 16;    // kLatency: windows before a ceiling is retried
  int32_t remeasure_windows = 32;      // kThroughput: windows before a measurement ages out
  // kThroughput: sizes to climb over (ascending, within min..max); empty = powers of two + max.
  std::vector<int32_t> candidate_sizes;
};

class AdaptiveBatchSizer {
 public:
  AdaptiveBatchSizer() = default;  // valid default: latency profile, size 1..64

  static Result<AdaptiveBatchSizer> create(AdaptiveBatchSizerConfig config);

  // The size to aim for now.
  int32_t batch_size() const { return m_size; }
  // One executed batch: its actual size and its latency (ns). Ignores size <= 0 or latency < 0.
  void observe(int32_t batch_size, int64_t latency_ns);
  // Halve the size (not below min) and forbid growing back to the old size until it ages out.
  void on_memory_pressure();
  // Back to the initial size with no history.
  void reset();

  const AdaptiveBatchSizerConfig& config() const { return m_config; }
  // Last window's p99 latency (kLatency) or items/s (kThroughput); 0 before the first window.
  double last_window_metric() const { return m_last_metric; }
  // kThroughput: the measured items/s per candidate (0 = unmeasured), same order as candidates().
  const std::vector<double>& measured_throughput() const { return m_throughput; }
  const std::vector<int32_t>& candidates() const { return m_candidates; }

 private:
  void finish_window();
  void decide_latency();
  void decide_throughput();
  void set_size(int32_t size);
  size_t candidate_index(int32_t size) const;

  AdaptiveBatchSizerConfig m_config;
  int32_t m_size = 1;
  std::vector<int64_t> m_latencies;  // current window
  int64_t m_window_items = 0;
  int64_t m_window_ns = 0;
  double m_last_metric = 0.0;
  uint64_t m_windows = 0;

  // kLatency
  int32_t m_ceiling = 0;  // sizes >= ceiling exceeded the target (0 = none)
  uint64_t m_ceiling_window = 0;

  // kThroughput
  std::vector<int32_t> m_candidates;
  std::vector<double> m_throughput;
  std::vector<uint64_t> m_measured_window;
};

}  // namespace kiln
