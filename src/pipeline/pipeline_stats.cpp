#include "pipeline/pipeline_stats.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace kiln {

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

const char* stage_kind_name(StageKind kind) {
  switch (kind) {
    case StageKind::kSource: return "source";
    case StageKind::kSink: return "sink";
    case StageKind::kStage: break;
  }
  return "stage";
}

}  // namespace

void LatencySamples::add(int64_t ns) {
  ++m_seen;
  if (m_samples.size() < kCap) {
    m_samples.push_back(ns);
    return;
  }
  // Reservoir sampling (Algorithm R): keep each new sample with probability kCap / seen.
  const uint64_t slot = splitmix64(m_rng) % static_cast<uint64_t>(m_seen);
  if (slot < kCap) m_samples[slot] = ns;
}

void LatencySamples::merge(const LatencySamples& other) {
  m_seen += other.m_seen;
  m_samples.insert(m_samples.end(), other.m_samples.begin(), other.m_samples.end());
  if (m_samples.size() <= kCap) return;
  // Even stride subsample back to the cap (samples from each part stay in proportion).
  std::vector<int64_t> kept;
  kept.reserve(kCap);
  const double step = static_cast<double>(m_samples.size()) / static_cast<double>(kCap);
  for (size_t i = 0; i < kCap; ++i) kept.push_back(m_samples[static_cast<size_t>(static_cast<double>(i) * step)]);
  m_samples.swap(kept);
}

int64_t LatencySamples::percentile_ns(double q) const {
  if (m_samples.empty()) return 0;
  std::vector<int64_t> sorted = m_samples;
  std::sort(sorted.begin(), sorted.end());
  q = std::clamp(q, 0.0, 1.0);
  // Nearest rank: the smallest sample with at least q of the samples at or below it.
  size_t rank = static_cast<size_t>(q * static_cast<double>(sorted.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

void LatencySamples::reset() { *this = LatencySamples(); }

double StageStats::items_per_s(int64_t wall_ns) const {
  return wall_ns > 0 ? static_cast<double>(items) * 1e9 / static_cast<double>(wall_ns) : 0.0;
}

double StageStats::busy_share(int64_t wall_ns) const {
  if (wall_ns <= 0 || workers <= 0) return 0.0;
  return static_cast<double>(busy_ns) / (static_cast<double>(wall_ns) * workers);
}

int32_t PipelineStats::bottleneck() const {
  int32_t best = -1;
  double best_share = -1.0;
  for (size_t i = 0; i < stages.size(); ++i) {
    const double share = stages[i].busy_share(wall_ns);
    if (share > best_share) {
      best_share = share;
      best = static_cast<int32_t>(i);
    }
  }
  return best;
}

const StageStats* PipelineStats::find(const std::string& name) const {
  for (const StageStats& s : stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string pipeline_stats_table(const PipelineStats& stats) {
  std::string out;
  char line[320];
  std::snprintf(line, sizeof(line), "%-16s %7s %10s %11s %7s %7s %8s %9s %9s %9s %11s\n", "stage", "workers", "items",
                "items/s", "busy%", "wait_in%", "wait_out%", "p50_ms", "p95_ms", "p99_ms", "queue_hw");
  out += line;
  const double wall = static_cast<double>(stats.wall_ns);
  for (const StageStats& s : stats.stages) {
    const double worker_time = wall * std::max(1, s.workers);
    auto pct = [&](int64_t ns) { return worker_time > 0 ? 100.0 * static_cast<double>(ns) / worker_time : 0.0; };
    char queue[32] = "-";
    if (s.queue_capacity > 0) {
      std::snprintf(queue, sizeof(queue), "%lld/%lld", static_cast<long long>(s.queue_high_water),
                    static_cast<long long>(s.queue_capacity));
    }
    std::snprintf(line, sizeof(line), "%-16.16s %7d %10lld %11.1f %7.1f %7.1f %8.1f %9.3f %9.3f %9.3f %11s\n",
                  s.name.c_str(), s.workers, static_cast<long long>(s.items), s.items_per_s(stats.wall_ns),
                  pct(s.busy_ns), pct(s.wait_input_ns), pct(s.wait_output_ns), ms(s.latency.percentile_ns(0.50)),
                  ms(s.latency.percentile_ns(0.95)), ms(s.latency.percentile_ns(0.99)), queue);
    out += line;
  }
  std::snprintf(line, sizeof(line),
                "total: %lld produced, %lld delivered, %lld quarantined in %.3f s; end-to-end p50 %.3f ms, "
                "p99 %.3f ms\n",
                static_cast<long long>(stats.produced), static_cast<long long>(stats.delivered),
                static_cast<long long>(stats.quarantined), wall / 1e9, ms(stats.end_to_end.percentile_ns(0.50)),
                ms(stats.end_to_end.percentile_ns(0.99)));
  out += line;
  const int32_t b = stats.bottleneck();
  if (b >= 0) {
    const StageStats& s = stats.stages[static_cast<size_t>(b)];
    std::snprintf(line, sizeof(line), "bottleneck: %s (busy %.1f%% per worker, %d worker%s)\n", s.name.c_str(),
                  100.0 * s.busy_share(stats.wall_ns), s.workers, s.workers == 1 ? "" : "s");
    out += line;
  }
  return out;
}

std::string pipeline_stats_json(const PipelineStats& stats) {
  nlohmann::json j;
  j["wall_s"] = static_cast<double>(stats.wall_ns) / 1e9;
  j["produced"] = stats.produced;
  j["delivered"] = stats.delivered;
  j["quarantined"] = stats.quarantined;
  j["max_reorder"] = stats.max_reorder;
  j["end_to_end_ms"] = {{"p50", ms(stats.end_to_end.percentile_ns(0.50))},
                        {"p95", ms(stats.end_to_end.percentile_ns(0.95))},
                        {"p99", ms(stats.end_to_end.percentile_ns(0.99))}};
  nlohmann::json stages = nlohmann::json::array();
  for (const StageStats& s : stats.stages) {
    stages.push_back({{"name", s.name},
                      {"kind", stage_kind_name(s.kind)},
                      {"workers", s.workers},
                      {"items", s.items},
                      {"errors", s.errors},
                      {"discarded", s.discarded},
                      {"items_per_s", s.items_per_s(stats.wall_ns)},
                      {"busy_share", s.busy_share(stats.wall_ns)},
                      {"busy_s", static_cast<double>(s.busy_ns) / 1e9},
                      {"wait_input_s", static_cast<double>(s.wait_input_ns) / 1e9},
                      {"wait_output_s", static_cast<double>(s.wait_output_ns) / 1e9},
                      {"latency_ms",
                       {{"p50", ms(s.latency.percentile_ns(0.50))},
                        {"p95", ms(s.latency.percentile_ns(0.95))},
                        {"p99", ms(s.latency.percentile_ns(0.99))}}},
                      {"queue_capacity", s.queue_capacity},
                      {"queue_high_water", s.queue_high_water}});
  }
  j["stages"] = std::move(stages);
  const int32_t b = stats.bottleneck();
  j["bottleneck"] = b >= 0 ? nlohmann::json(stats.stages[static_cast<size_t>(b)].name) : nlohmann::json(nullptr);
  return j.dump();
}

std::string quarantine_json_line(const QuarantineEntry& entry) {
  nlohmann::json j;
  j["id"] = entry.id;
  j["stage"] = entry.stage;
  j["error"] = entry.error;
  // Error messages may carry bytes from file names; never abort on invalid UTF-8.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status QuarantineReport::open(const std::string& path) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_file) {
    std::fclose(m_file);
    m_file = nullptr;
  }
  if (path.empty()) return Status::ok();
  m_file = std::fopen(path.c_str(), "w");
  if (!m_file) return errno_status(path + ": cannot open quarantine report");
  return Status::ok();
}

void QuarantineReport::add(QuarantineEntry entry) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_file) {
    const std::string line = quarantine_json_line(entry) + "\n";
    std::fwrite(line.data(), 1, line.size(), m_file);
    std::fflush(m_file);
  }
  m_entries.push_back(std::move(entry));
}

void QuarantineReport::close() {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_file) {
    std::fclose(m_file);
    m_file = nullptr;
  }
}

std::vector<QuarantineEntry> QuarantineReport::entries() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_entries;
}

void QuarantineReport::reset() {
  close();
  std::lock_guard<std::mutex> lock(m_mutex);
  m_entries.clear();
}

}  // namespace kiln
