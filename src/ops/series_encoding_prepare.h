// The per-window preparation of the series encodings (ops/series_encoding.h): a window -> its prepared row. Included
// by series_encoding.cpp (encoding_prepare, the GPU backends' rows) and by each CPU variant's loops, so that each
// compiles it with its own flags; in an unnamed namespace, so that each includer keeps its own copy (never another
// variant's). Every copy evaluates the same IEEE operations: the rows are identical.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/series_encoding.h"

namespace kiln {

// The window's values sorted by std::sort, in float64 (series_encoding.cpp, built for the baseline ISA).
void encoding_sort_values(const std::vector<float>& x, std::vector<double>& sorted);

namespace {

// The window's closes, contiguous.
inline void encoding_gather_closes(const ImageView& window, std::vector<float>& x) {
  const auto* values = static_cast<const float*>(window.data);
  const int32_t step = window.channels;
  const int32_t lane = step == 4 ? 3 : 0;
  x.resize(static_cast<size_t>(window.width));
  for (size_t t = 0; t < x.size(); ++t) x[t] = values[t * step + lane];
}

// The minimum and maximum that `lo = x < lo ? x : lo` (and `hi`) over t = 1..n-1 from x[0] finds, taken 8 lanes at a
// time so that the compiler vectorises it: the same values (a NaN is never taken unless it is x[0], which then stays
// in every lane), but for the sign of a zero, which changes no pixel (x - lo and hi - lo are the same).
inline void encoding_min_max(const float* x, size_t n, float& lo, float& hi) {
  constexpr size_t kLanes = 8;
  float los[kLanes];
  float his[kLanes];
  for (size_t l = 0; l < kLanes; ++l) los[l] = his[l] = x[0];
  size_t t = 1;
  for (; t + kLanes <= n; t += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) {
      los[l] = x[t + l] < los[l] ? x[t + l] : los[l];
      his[l] = x[t + l] > his[l] ? x[t + l] : his[l];
    }
  }
  for (; t < n; ++t) {
    los[0] = x[t] < los[0] ? x[t] : los[0];
    his[0] = x[t] > his[0] ? x[t] : his[0];
  }
  lo = los[0];
  hi = his[0];
  for (size_t l = 1; l < kLanes; ++l) {
    lo = los[l] < lo ? los[l] : lo;
    hi = his[l] > hi ? his[l] : hi;
  }
}

// Windows up to this long are sorted by ranks (below); longer ones by std::sort.
constexpr size_t kEncodingRankSortMax = 256;

// The window's values in ascending order, in float64. Without NaN, a short window puts each value at its rank (how
// many values are below it), a count the compiler vectorises, several times cheaper than a sort of 64 values; equal
// values share a rank, and the places after it that no value took are theirs (copies of the one before). The same
// sequence as a sort, but for the order of -0 and +0, which every later step treats alike. With a NaN the order is
// std::sort's, as it always was.
inline void encoding_sorted_values(const std::vector<float>& x, std::vector<double>& sorted,
                                   std::vector<int32_t>& taken) {
  const size_t n = x.size();
  bool has_nan = false;
  for (size_t t = 0; t < n; ++t) has_nan |= x[t] != x[t];
  if (has_nan || n > kEncodingRankSortMax) {
    encoding_sort_values(x, sorted);
    return;
  }
  sorted.resize(n);
  taken.assign(n, 0);
  for (size_t t = 0; t < n; ++t) {
    const float v = x[t];
    int32_t below = 0;
    for (size_t s = 0; s < n; ++s) below += x[s] < v ? 1 : 0;
    sorted[static_cast<size_t>(below)] = v;
    taken[static_cast<size_t>(below)] = 1;
  }
  for (size_t k = 1; k < n; ++k) {
    if (taken[k] == 0) sorted[k] = sorted[k - 1];
  }
}

// std::lower_bound's search (the same probes, hence the same answer) without a branch on the comparison: a window's
// values fall on either side of an edge at random, which a branch mispredicts.
inline int32_t encoding_lower_bound(const double* edges, int32_t count, double v) {
  int32_t first = 0;
  int32_t len = count;
  while (len > 0) {
    const int32_t half = len / 2;
    const int32_t below = edges[first + half] < v ? 1 : 0;  // arithmetic on it, which compilers do not branch on
    first += below * (half + 1);
    len = half + below * (len - 2 * half - 1);  // below: len - half - 1, else half
  }
  return first;
}

inline void encoding_prepare_mtf(int32_t bins, EncodingScratch& scratch, float* a, float* matrix) {
  const std::vector<float>& x = scratch.x;
  const size_t n = x.size();
  std::vector<double>& sorted = scratch.sorted;
  encoding_sorted_values(x, sorted, scratch.taken);
  std::vector<double>& quantiles = scratch.quantiles;
  quantiles.resize(static_cast<size_t>(bins - 1));
  for (int32_t k = 1; k < bins; ++k) {
    const double at = static_cast<double>(k) / bins * static_cast<double>(n - 1);
    const size_t lo = static_cast<size_t>(at);
    const size_t hi = std::min(lo + 1, n - 1);
    quantiles[static_cast<size_t>(k - 1)] = sorted[lo] + (at - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
  }
  // pyts drops an edge within 1e-8 of the next one (tied quantiles), then bins with numpy.digitize(right=True).
  std::vector<double>& edges = scratch.edges;
  edges.clear();
  for (size_t k = 0; k < quantiles.size(); ++k) {
    if (k + 1 == quantiles.size() || !(std::abs(quantiles[k + 1] - quantiles[k]) <= 1e-8)) edges.push_back(quantiles[k]);
  }
  std::vector<int32_t>& bin = scratch.bins;
  bin.assign(n, 0);
  bool ascending = true;
  for (size_t k = 0; k + 1 < edges.size(); ++k) ascending &= edges[k] <= edges[k + 1];
  if (ascending) {  // lower_bound = the number of edges below the value: counts, edge by edge, that vectorise
    for (const double edge : edges) {
      for (size_t t = 0; t < n; ++t) bin[t] += edge < static_cast<double>(x[t]) ? 1 : 0;
    }
  } else {  // quantiles out of order (a NaN, or rounding in extreme ranges): lower_bound's own probes
    const auto edge_count = static_cast<int32_t>(edges.size());
    for (size_t t = 0; t < n; ++t) bin[t] = encoding_lower_bound(edges.data(), edge_count, static_cast<double>(x[t]));
  }
  for (size_t t = 0; t < n; ++t) a[t] = static_cast<float>(bin[t]);
  std::vector<double>& counts = scratch.counts;
  counts.assign(static_cast<size_t>(bins) * bins, 0.0);
  for (size_t t = 0; t + 1 < n; ++t) counts[static_cast<size_t>(bin[t] * bins + bin[t + 1])] += 1.0;
  for (int32_t r = 0; r < bins; ++r) {
    double sum = 0.0;
    for (int32_t c = 0; c < bins; ++c) sum += counts[static_cast<size_t>(r * bins + c)];
    for (int32_t c = 0; c < bins; ++c) {
      matrix[r * bins + c] = sum > 0.0 ? static_cast<float>(counts[static_cast<size_t>(r * bins + c)] / sum) : 0.0f;
    }
  }
}

inline void encoding_prepare_window(const KilnEncodingParams& p, const ImageView& window, float* row,
                                    EncodingScratch& scratch) {
  encoding_gather_closes(window, scratch.x);
  const float* x = scratch.x.data();
  const auto n = scratch.x.size();
  std::fill(row, row + p.row_floats, 0.0f);
  if (p.kind == KILN_ENCODING_MTF) {
    encoding_prepare_mtf(p.bins, scratch, row, row + 2 * n + 1);
    return;
  }
  float lo_f = 0.0f;
  float hi_f = 0.0f;
  encoding_min_max(x, n, lo_f, hi_f);
  const double lo = lo_f;
  const double range = static_cast<double>(hi_f) - lo;
  if (p.kind == KILN_ENCODING_RP) {
    std::copy(x, x + n, row);
    row[2 * n] = range > 0.0 ? static_cast<float>(1.0 / range) : 0.0f;
    return;
  }
  if (!(range > 0.0)) {  // x~ = 0: a 0, b 1
    std::fill(row + n, row + 2 * n, 1.0f);
    return;
  }
  for (size_t t = 0; t < n; ++t) {
    const double scaled = std::clamp((2.0 * (static_cast<double>(x[t]) - lo) - range) / range, -1.0, 1.0);
    row[t] = static_cast<float>(scaled);
    row[n + t] = static_cast<float>(std::sqrt(1.0 - scaled * scaled));
  }
}

}  // namespace
}  // namespace kiln
