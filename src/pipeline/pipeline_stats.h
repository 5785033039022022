// Per-stage statistics of a Pipeline run, the printable summary table and the quarantine report.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

// Latency samples in nanoseconds: exact percentiles over the stored samples. Beyond `kCap` samples it
// keeps a uniform reservoir (deterministic), so memory stays flat on long runs.
class LatencySamples {
 public:
  static constexpr size_t kCap = size_t{1} << 16;

  void add(int64_t ns);
  // Appends another set (e.g. one per worker), subsampling back to kCap if needed.
  void merge(const LatencySamples& other);
  // q in [0, 1]; 0 when empty. Nearest-rank on the sorted samples.
  int64_t percentile_ns(double q) const;
  int64_t count() const { return m_seen; }  // samples offered, stored or not
  size_t stored() const { return m_samples.size(); }
  void reset();

 private:
  std::vector<int64_t> m_samples;
  int64_t m_seen = 0;
  uint64_t m_rng = 0x9e3779b97f4a7c15ull;
};

enum class StageKind : uint8_t { kSource, kStage, kSink };

struct StageStats {
  std::string name;
  StageKind kind = StageKind::kStage;
  int32_t workers = 0;
  int64_t items = 0;           // processed successfully (source: produced; sink: delivered)
  int64_t errors = 0;          // the stage function returned an error
  int64_t discarded = 0;       // dropped unprocessed after a failure or a cancel
  int64_t busy_ns = 0;         // summed over workers: time inside the stage function
  int64_t wait_input_ns = 0;   // summed over workers: blocked on an empty input queue (source: on the order window)
  int64_t wait_output_ns = 0;  // summed over workers: blocked on a full output queue
  int64_t queue_capacity = 0;  // the stage's input queue (0 for the source)
  int64_t queue_high_water = 0;
  LatencySamples latency;      // per item: time inside the stage function

  double items_per_s(int64_t wall_ns) const;
  // Busy time over available worker time, in [0, 1]: the bottleneck has the highest.
  double busy_share(int64_t wall_ns) const;
};

struct PipelineStats {
  int64_t wall_ns = 0;
  int64_t produced = 0;     // samples the source returned
  int64_t delivered = 0;    // samples the sink accepted
  int64_t quarantined = 0;  // samples dropped by the skip policy
  int64_t max_reorder = 0;  // largest reorder buffer the ordered sink held
  std::vector<StageStats> stages;  // source, the stages in order, sink
  LatencySamples end_to_end;       // source return -> sink call, per delivered sample

  // Index into `stages` of the highest busy share per worker; -1 if there is none.
  int32_t bottleneck() const;
  const StageStats* find(const std::string& name) const;
  void reset() { *this = PipelineStats(); }
};

// Fixed-width table, one row per stage, then a "bottleneck: <name>" line.
std::string pipeline_stats_table(const PipelineStats& stats);
// The same numbers as one JSON object (for bench output and the profiler).
std::string pipeline_stats_json(const PipelineStats& stats);

// One quarantined sample: skipped because a stage returned an error.
struct QuarantineEntry {
  int64_t id = 0;
  std::string stage;
  std::string error;
};

// {"id":17,"stage":"decode","error":"IoError: truncated"} (no newline).
std::string quarantine_json_line(const QuarantineEntry& entry);

// Thread-safe quarantine sink: keeps entries in memory and, if opened on a path, appends each as a
// JSON line and flushes it, so the report survives a crash.
class QuarantineReport {
 public:
  QuarantineReport() = default;
  ~QuarantineReport() { close(); }
  QuarantineReport(const QuarantineReport&) = delete;
  QuarantineReport& operator=(const QuarantineReport&) = delete;

  // Truncates `path`; an empty path keeps entries in memory only.
  Status open(const std::string& path);
  void add(QuarantineEntry entry);
  void close();
  std::vector<QuarantineEntry> entries() const;
  void reset();

 private:
  mutable std::mutex m_mutex;
  std::FILE* m_file = nullptr;
  std::vector<QuarantineEntry> m_entries;
};

}  // namespace kiln
