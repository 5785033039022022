// Per-range statistics of the profiler's events, and the table `--profile` prints at exit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/profiler.h"

namespace kiln {

struct ProfileRangeStats {
  std::string name;
  int64_t calls = 0;
  double total_ms = 0.0;
  double mean_ms = 0.0;
  double p95_ms = 0.0;     // nearest rank: the ceil(0.95 * calls)-th shortest duration
  double share_pct = 0.0;  // total / wall time; ranges on several threads or nested can exceed 100
};

struct ProfileSummary {
  double wall_ms = 0.0;  // from the first event's start to the last event's end, over all threads
  std::vector<ProfileRangeStats> ranges;  // by total_ms, largest first (then by name)
};

// Summarizes the given events (or the profiler's current ones).
ProfileSummary profile_summarize(const std::vector<ProfileThreadEvents>& threads);
ProfileSummary profile_summarize();

// Fixed-width table: range, calls, total ms, mean ms, p95 ms, share; one line per range name.
std::string profile_summary_table(const ProfileSummary& summary);
std::string profile_summary_table();

}  // namespace kiln
