#include "ops/series_encoding.h"

#include <algorithm>
#include <cmath>

namespace kiln {

namespace {

int32_t encoding_kind(ChartStyle style) {
  switch (style) {
    case ChartStyle::kGadf: return KILN_ENCODING_GADF;
    case ChartStyle::kMtf: return KILN_ENCODING_MTF;
    case ChartStyle::kRp: return KILN_ENCODING_RP;
    default: return KILN_ENCODING_GASF;
  }
}

// The window's closes, contiguous.
void gather_closes(const ImageView& window, std::vector<float>& x) {
  const auto* values = static_cast<const float*>(window.data);
  const int32_t step = window.channels;
  const int32_t lane = step == 4 ? 3 : 0;
  x.resize(static_cast<size_t>(window.width));
  for (size_t t = 0; t < x.size(); ++t) x[t] = values[t * step + lane];
}

// Windows up to this long are sorted by ranks (below); longer ones by std::sort.
constexpr size_t kRankSortMax = 256;

// The window's values in ascending order, in float64. Without NaN, a short window puts each value at its rank (the
// values below it plus the equal ones before it): counts the compiler vectorises, several times cheaper than a sort
// of 64 values, and the same sequence, since equal values are the same number (-0 and +0 aside, which every later
// step treats alike). With a NaN the order is std::sort's, as it always was.
void sort_values(const std::vector<float>& x, std::vector<double>& sorted) {
  const size_t n = x.size();
  sorted.resize(n);
  bool has_nan = false;
  for (size_t t = 0; t < n; ++t) has_nan |= x[t] != x[t];
  if (has_nan || n > kRankSortMax) {
    for (size_t t = 0; t < n; ++t) sorted[t] = x[t];
    std::sort(sorted.begin(), sorted.end());
    return;
  }
  for (size_t t = 0; t < n; ++t) {
    const float v = x[t];
    int32_t rank = 0;
    for (size_t s = 0; s < t; ++s) rank += x[s] <= v ? 1 : 0;
    for (size_t s = t + 1; s < n; ++s) rank += x[s] < v ? 1 : 0;
    sorted[static_cast<size_t>(rank)] = v;
  }
}

void prepare_mtf(int32_t bins, EncodingScratch& scratch, float* a, float* matrix) {
  const std::vector<float>& x = scratch.x;
  const size_t n = x.size();
  std::vector<double>& sorted = scratch.sorted;
  sort_values(x, sorted);
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
  bin.resize(n);
  for (size_t t = 0; t < n; ++t) {
    bin[t] = static_cast<int32_t>(std::lower_bound(edges.begin(), edges.end(), static_cast<double>(x[t])) - edges.begin());
    a[t] = static_cast<float>(bin[t]);
  }
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

}  // namespace

KilnEncodingParams encoding_params(const RenderParams& params, int32_t n) {
  KilnEncodingParams p{};
  p.kind = encoding_kind(params.style);
  p.n = n;
  p.bins = p.kind == KILN_ENCODING_MTF ? params.mtf_bins : 0;
  p.binary = p.kind == KILN_ENCODING_RP && params.rp_threshold >= 0.0f ? 1 : 0;
  p.threshold = params.rp_threshold;
  p.row_floats = kiln_encoding_row_floats(n, p.bins);
  p.as_float = params.dtype == PixelType::kF32 ? 1 : 0;
  return p;
}

void encoding_prepare(const KilnEncodingParams& p, const ImageView& window, float* row, EncodingScratch& scratch) {
  gather_closes(window, scratch.x);
  const float* x = scratch.x.data();
  const auto n = scratch.x.size();
  std::fill(row, row + p.row_floats, 0.0f);
  if (p.kind == KILN_ENCODING_MTF) {
    prepare_mtf(p.bins, scratch, row, row + 2 * n + 1);
    return;
  }
  float lo_f = x[0];
  float hi_f = lo_f;
  for (size_t t = 1; t < n; ++t) {
    lo_f = x[t] < lo_f ? x[t] : lo_f;
    hi_f = x[t] > hi_f ? x[t] : hi_f;
  }
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

EncodingRows encoding_rows_prepare(const OpCall& call) {
  EncodingRows rows;
  rows.params = encoding_params(*static_cast<const RenderParams*>(call.params), call.in[0].width);
  const auto row_floats = static_cast<size_t>(rows.params.row_floats);
  rows.floats.resize(static_cast<size_t>(call.in.count) * row_floats);
  EncodingScratch scratch;
  for (int64_t i = 0; i < call.in.count; ++i) {
    encoding_prepare(rows.params, call.in[i], rows.floats.data() + static_cast<size_t>(i) * row_floats, scratch);
  }
  rows.view = image_view_packed(rows.floats.data(), rows.params.row_floats, static_cast<int32_t>(call.in.count), 1,
                                PixelType::kF32);
  return rows;
}

}  // namespace kiln
