// series_with_moving_averages(): the moving-average channels a chart draws, computed over the whole series, so a
// window's first days average the rows before the window (as Jiang, Kelly and Xiu compute theirs).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kiln/apps/render.h"

namespace kiln {

Result<Series> series_with_moving_averages(const Series& series, const std::vector<int32_t>& windows) {
  if (windows.empty()) return series;
  for (const int32_t n : windows) {
    if (n < 1) return invalid_argument("a moving-average window must be at least 1 day (got " + std::to_string(n) + ")");
  }
  const auto added = static_cast<int32_t>(windows.size());
  Series out;
  out.rows = series.rows;
  out.channels = series.channels + added;
  out.layers = series.layers + added;
  out.source = series.source;
  out.column = series.column;
  out.dates = series.dates;
  out.symbols = series.symbols;
  out.symbol_rows = series.symbol_rows;
  out.market_caps = series.market_caps;
  out.absent_days = series.absent_days;
  out.values.resize(static_cast<size_t>(out.rows) * static_cast<size_t>(out.channels));
  const int32_t line = series.line_channel();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t k = 0; k < series.segments(); ++k) {
    const int64_t begin = series.segment_begin(k);
    for (int64_t t = begin; t < series.segment_end(k); ++t) {
      const float* in = series.row(t);
      float* row = out.values.data() + t * out.channels;
      for (int32_t c = 0; c < series.channels; ++c) row[c] = in[c];
      for (int32_t m = 0; m < added; ++m) {
        const int64_t n = windows[static_cast<size_t>(m)];
        float value = nan;
        if (t + 1 - begin >= n) {
          double sum = 0.0;
          for (int64_t u = t + 1 - n; u <= t; ++u) sum += static_cast<double>(series.row(u)[line]);
          if (std::isfinite(sum)) value = static_cast<float>(sum / static_cast<double>(n));
        }
        row[series.channels + m] = value;
      }
    }
  }
  return out;
}

}  // namespace kiln
