// Adaptive batch sizing: latency-target and throughput hill-climbing profiles.
#include "pipeline/adaptive_batch_sizer.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace kiln {

Result<AdaptiveBatchSizer> AdaptiveBatchSizer::create(AdaptiveBatchSizerConfig config) {
  if (config.min_batch_size < 1) return invalid_argument("sizer: min_batch_size must be >= 1");
  if (config.max_batch_size < config.min_batch_size) {
    return invalid_argument("sizer: max_batch_size " + std::to_string(config.max_batch_size) + " < min_batch_size " +
                            std::to_string(config.min_batch_size));
  }
  if (config.initial_batch_size < config.min_batch_size || config.initial_batch_size > config.max_batch_size) {
    return invalid_argument("sizer: initial_batch_size outside min..max");
  }
  if (config.window < 1) return invalid_argument("sizer: window must be >= 1");
  if (config.target_p99_ns <= 0) return invalid_argument("sizer: target_p99_ns must be > 0");
  if (config.ceiling_ttl_windows < 1 || config.remeasure_windows < 1) {
    return invalid_argument("sizer: ceiling_ttl_windows and remeasure_windows must be >= 1");
  }
  auto& sizes = config.candidate_sizes;
  for (int32_t size : sizes) {
    if (size < config.min_batch_size || size > config.max_batch_size) {
      return invalid_argument("sizer: candidate size " + std::to_string(size) + " outside min..max");
    }
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());

  AdaptiveBatchSizer sizer;
  sizer.m_config = std::move(config);
  sizer.reset();
  return sizer;
}

void AdaptiveBatchSizer::reset() {
  m_candidates = m_config.candidate_sizes;
  if (m_candidates.empty()) {
    m_candidates.push_back(m_config.min_batch_size);
    for (int64_t p = 1; p < m_config.max_batch_size; p *= 2) {
      if (p > m_config.min_batch_size) m_candidates.push_back(static_cast<int32_t>(p));
    }
    if (m_candidates.back() != m_config.max_batch_size) m_candidates.push_back(m_config.max_batch_size);
  }
  m_throughput.assign(m_candidates.size(), 0.0);
  m_measured_window.assign(m_candidates.size(), 0);
  m_latencies.clear();
  m_window_items = 0;
  m_window_ns = 0;
  m_last_metric = 0.0;
  m_windows = 0;
  m_ceiling = 0;
  m_ceiling_window = 0;
  m_size = m_config.initial_batch_size;
  set_size(m_config.initial_batch_size);
}

size_t AdaptiveBatchSizer::candidate_index(int32_t size) const {
  size_t index = 0;
  for (size_t i = 0; i < m_candidates.size(); ++i) {
    if (m_candidates[i] <= size) index = i;
  }
  return index;
}

void AdaptiveBatchSizer::set_size(int32_t size) {
  size = std::clamp(size, m_config.min_batch_size, m_config.max_batch_size);
  if (m_config.profile == SizerProfile::kThroughput && !m_candidates.empty()) {
    size = m_candidates[candidate_index(size)];
  }
  m_size = size;
}

void AdaptiveBatchSizer::observe(int32_t batch_size, int64_t latency_ns) {
  if (batch_size <= 0 || latency_ns < 0) return;
  if (m_latencies.capacity() == 0) m_latencies.reserve(static_cast<size_t>(m_config.window));
  m_latencies.push_back(latency_ns);
  m_window_items += batch_size;
  m_window_ns += latency_ns;
  if (static_cast<int32_t>(m_latencies.size()) >= m_config.window) finish_window();
}

void AdaptiveBatchSizer::finish_window() {
  ++m_windows;
  if (m_ceiling != 0 && m_windows - m_ceiling_window > static_cast<uint64_t>(m_config.ceiling_ttl_windows)) {
    m_ceiling = 0;  // conditions may have changed: allow re-exploring
  }
  if (m_config.profile == SizerProfile::kLatency) {
    decide_latency();
  } else {
    decide_throughput();
  }
  m_latencies.clear();
  m_window_items = 0;
  m_window_ns = 0;
}

void AdaptiveBatchSizer::decide_latency() {
  std::vector<int64_t> sorted = m_latencies;
  std::sort(sorted.begin(), sorted.end());
  const size_t rank = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(sorted.size())));
  const int64_t p99 = sorted[std::max<size_t>(rank, 1) - 1];
  m_last_metric = static_cast<double>(p99);

  const double target = static_cast<double>(m_config.target_p99_ns);
  const int32_t size = m_size;
  if (p99 > m_config.target_p99_ns) {
    if (m_ceiling == 0 || size < m_ceiling) m_ceiling = size;
    m_ceiling_window = m_windows;
    // Linear model: latency ~ size; the size that would meet the target, strictly smaller.
    const auto estimate = static_cast<int32_t>(std::floor(size * target / static_cast<double>(p99)));
    set_size(std::min(estimate, size - 1));
    return;
  }
  int64_t grown = 2 * static_cast<int64_t>(size);
  if (p99 > 0) {
    const auto estimate = static_cast<int64_t>(std::floor(size * target / static_cast<double>(p99)));
    grown = std::min(grown, std::max<int64_t>(estimate, size + 1));  // at least probe size + 1
  }
  if (m_ceiling != 0) grown = std::min<int64_t>(grown, m_ceiling - 1);
  grown = std::min<int64_t>(grown, m_config.max_batch_size);
  set_size(static_cast<int32_t>(std::max<int64_t>(grown, size)));
}

void AdaptiveBatchSizer::decide_throughput() {
  if (m_window_ns <= 0) return;
  const double throughput = static_cast<double>(m_window_items) * 1e9 / static_cast<double>(m_window_ns);
  m_last_metric = throughput;
  const size_t i = candidate_index(m_size);
  m_throughput[i] = throughput;
  m_measured_window[i] = m_windows;

  auto fresh = [&](size_t j) {
    return m_throughput[j] > 0.0 &&
           m_windows - m_measured_window[j] < static_cast<uint64_t>(m_config.remeasure_windows);
  };
  auto allowed = [&](size_t j) { return m_ceiling == 0 || m_candidates[j] < m_ceiling; };

  // Going up only pays while this size beats the one below (else we came down from a peak).
  const bool beats_below = !(i > 0 && fresh(i - 1) && m_throughput[i - 1] > throughput);
  if (beats_below && i + 1 < m_candidates.size() && allowed(i + 1)) {
    if (!fresh(i + 1) || m_throughput[i + 1] > throughput) {
      set_size(m_candidates[i + 1]);
      return;
    }
  }
  if (i > 0 && (!fresh(i - 1) || m_throughput[i - 1] > throughput)) {
    set_size(m_candidates[i - 1]);
    return;
  }
  // Settled: stay.
}

void AdaptiveBatchSizer::on_memory_pressure() {
  const int32_t old_size = m_size;
  m_ceiling = old_size;
  m_ceiling_window = m_windows;
  set_size(std::max(m_config.min_batch_size, old_size / 2));
  if (m_config.profile == SizerProfile::kThroughput && m_size >= old_size && candidate_index(m_size) > 0) {
    set_size(m_candidates[candidate_index(m_size) - 1]);  // snapped back up: take the next lower candidate
  }
  m_latencies.clear();
  m_window_items = 0;
  m_window_ns = 0;
}

}  // namespace kiln
