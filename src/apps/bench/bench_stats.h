// Mean ± sample standard deviation of repeated measurements, the way every kiln benchmark reports them (the
// bench programs in bench/ and `kiln bench`'s measurements here in src/apps/bench).
#pragma once

#include <algorithm>
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

// The middle value (the mean of the two middle ones for an even count); 0 for none. Benchmarks that repeat rounds
// on a shared machine report it: one slow round moves it less than the mean.
inline double median_of(std::vector<double> xs) {
  if (xs.empty()) return 0.0;
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  return n % 2 == 1 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}

}  // namespace kiln::bench
