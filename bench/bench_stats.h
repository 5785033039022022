// Mean ± sample standard deviation of repeated measurements, the way every kiln benchmark reports them (the
// bench programs and `kiln bench`). Header-only so that the CLI can use it without linking bench code.
#pragma once

#include <cmath>
#include <vector>

namespace kiln::bench {

struct Stats {
  double mean = 0.0;
  double stddev = 0.0;  // sample (n - 1) standard deviation; 0 for fewer than two values
};

inline Stats stats_of(const std::vector<double>& xs) {
  Stats s;
  if (xs.empty()) return s;
  for (double x : xs) s.mean += x;
  s.mean /= static_cast<double>(xs.size());
  if (xs.size() > 1) {
    double ss = 0.0;
    for (double x : xs) ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / static_cast<double>(xs.size() - 1));
  }
  return s;
}

}  // namespace kiln::bench
