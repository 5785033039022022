#include "profiler/profile_summary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

namespace kiln {

ProfileSummary profile_summarize(const std::vector<ProfileThreadEvents>& threads) {
  // Keyed by text, not pointer: the same name may come from different literals.
  std::unordered_map<std::string_view, std::vector<int64_t>> durations;
  int64_t first_ns = std::numeric_limits<int64_t>::max();
  int64_t last_ns = std::numeric_limits<int64_t>::min();
  for (const ProfileThreadEvents& thread : threads) {
    for (const ProfileEvent& event : thread.events) {
      int64_t end_ns = event.ts_ns + (event.kind == ProfileEventKind::kComplete ? event.dur_ns : 0);
      first_ns = std::min(first_ns, event.ts_ns);
      last_ns = std::max(last_ns, end_ns);
      if (event.kind == ProfileEventKind::kComplete) {
        durations[event.name != nullptr ? event.name : ""].push_back(event.dur_ns);
      }
    }
  }

  ProfileSummary summary;
  if (first_ns > last_ns) return summary;
  summary.wall_ms = static_cast<double>(last_ns - first_ns) / 1e6;
  summary.ranges.reserve(durations.size());
  for (auto& [name, values] : durations) {
    std::sort(values.begin(), values.end());
    int64_t total_ns = 0;
    for (int64_t v : values) total_ns += v;
    auto calls = static_cast<int64_t>(values.size());
    auto rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(calls)));
    ProfileRangeStats stats;
    stats.name = std::string(name);
    stats.calls = calls;
    stats.total_ms = static_cast<double>(total_ns) / 1e6;
    stats.mean_ms = stats.total_ms / static_cast<double>(calls);
    stats.p95_ms = static_cast<double>(values[std::max<size_t>(rank, 1) - 1]) / 1e6;
    stats.share_pct = summary.wall_ms > 0.0 ? 100.0 * stats.total_ms / summary.wall_ms : 0.0;
    summary.ranges.push_back(std::move(stats));
  }
  std::sort(summary.ranges.begin(), summary.ranges.end(), [](const ProfileRangeStats& a, const ProfileRangeStats& b) {
    if (a.total_ms != b.total_ms) return a.total_ms > b.total_ms;
    return a.name < b.name;
  });
  return summary;
}

ProfileSummary profile_summarize() { return profile_summarize(Profiler::instance().snapshot()); }

std::string profile_summary_table(const ProfileSummary& summary) {
  size_t width = 5;  // "range"
  for (const ProfileRangeStats& r : summary.ranges) width = std::max(width, r.name.size());
  std::string out;
  auto line = std::back_inserter(out);
  fmt::format_to(line, "{:<{}}  {:>9}  {:>12}  {:>10}  {:>10}  {:>7}\n", "range", width, "calls", "total ms", "mean ms",
                 "p95 ms", "share");
  for (const ProfileRangeStats& r : summary.ranges) {
    fmt::format_to(line, "{:<{}}  {:>9}  {:>12.3f}  {:>10.3f}  {:>10.3f}  {:>6.1f}%\n", r.name, width, r.calls,
                   r.total_ms, r.mean_ms, r.p95_ms, r.share_pct);
  }
  fmt::format_to(line, "wall time {:.3f} ms, {} range names\n", summary.wall_ms, summary.ranges.size());
  return out;
}

std::string profile_summary_table() { return profile_summary_table(profile_summarize()); }

}  // namespace kiln
