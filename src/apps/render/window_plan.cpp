// window_plan(): which sliding windows of a series become images, and their labels. A panel's windows lie within
// one symbol each (symbol by symbol, in the panel's order); a label's future close too.
// A prefix count of non-finite rows makes the per-window check O(1).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kiln/apps/render.h"

namespace kiln {

namespace {

std::string series_name(const Series& series) { return series.source.empty() ? std::string("the series") : series.source; }

Status validate(const Series& series, const WindowSpec& spec) {
  if (spec.seq_len < 2) return invalid_argument("seq_len must be at least 2 (got " + std::to_string(spec.seq_len) + ")");
  if (spec.stride < 1) return invalid_argument("stride must be at least 1 (got " + std::to_string(spec.stride) + ")");
  if (spec.label_horizon < 0) {
    return invalid_argument("label_horizon must be 0 (no labels) or positive (got " +
                            std::to_string(spec.label_horizon) + ")");
  }
  if (std::isnan(spec.label_threshold)) return invalid_argument("label_threshold is NaN");
  if ((series.price_channels() != 1 && series.price_channels() != 4) || series.layers < 0) {
    return invalid_argument(series_name(series) + " has " + std::to_string(series.price_channels()) +
                            " price channels (expected 1, or 4 for Open,High,Low,Close)");
  }
  if (series.rows < 0 ||
      series.values.size() != static_cast<size_t>(series.rows) * static_cast<size_t>(series.channels)) {
    return invalid_argument(series_name(series) + ": " + std::to_string(series.values.size()) +
                            " values do not fill " + std::to_string(series.rows) + " rows of " +
                            std::to_string(series.channels) + " channels");
  }
  if (spec.ohlc && series.price_channels() != 4) {
    return invalid_argument("OHLC windows need a 4-channel series (Open,High,Low,Close); " + series_name(series) +
                            " has " + std::to_string(series.price_channels()) + " channel" +
                            (series.price_channels() == 1 ? "" : "s"));
  }
  if (series.is_panel()) {
    bool ordered = series.symbol_rows.size() == series.symbols.size() + 1 && series.symbol_rows.front() == 0 &&
                   series.symbol_rows.back() == series.rows;
    for (size_t k = 1; ordered && k < series.symbol_rows.size(); ++k) {
      ordered = series.symbol_rows[k - 1] <= series.symbol_rows[k];
    }
    if (!ordered) return invalid_argument(series_name(series) + ": the symbols' row ranges do not tile the panel");
    return Status::ok();  // a symbol shorter than a window has no window
  }
  if (spec.seq_len > series.rows) {
    return invalid_argument("seq_len " + std::to_string(spec.seq_len) + " is longer than the series (" +
                            std::to_string(series.rows) + " rows) in " + series_name(series));
  }
  return Status::ok();
}

// bad_before[i] = number of rows in [0, i) with a non-finite value among the channels a window draws (the prices
// drawn, the volume and the moving averages).
template <typename Count>
std::vector<Count> bad_row_prefix(const Series& series, bool all_channels) {
  std::vector<Count> prefix(static_cast<size_t>(series.rows) + 1);
  const int32_t first = all_channels ? 0 : series.line_channel();
  const int32_t last = all_channels ? series.channels - 1 : series.line_channel();
  Count bad = 0;
  prefix[0] = 0;
  for (int64_t i = 0; i < series.rows; ++i) {
    const float* row = series.row(i);
    bool finite = true;
    for (int32_t c = first; c <= last; ++c) finite = finite && std::isfinite(row[c]);
    for (int32_t c = series.price_channels(); c < series.channels; ++c) finite = finite && std::isfinite(row[c]);
    bad += finite ? 0 : 1;
    prefix[static_cast<size_t>(i) + 1] = bad;
  }
  return prefix;
}

// changes_before[i] = number of rows r in [1, i) whose line value differs from row r - 1: window [start, end) is
// constant when changes_before[end] == changes_before[start + 1].
template <typename Count>
std::vector<Count> change_prefix(const Series& series) {
  std::vector<Count> prefix(static_cast<size_t>(series.rows) + 1, 0);
  const int32_t line = series.line_channel();
  for (int64_t i = 1; i < series.rows; ++i) {
    const bool changed = series.row(i)[line] != series.row(i - 1)[line];
    prefix[static_cast<size_t>(i) + 1] = prefix[static_cast<size_t>(i)] + (changed ? 1 : 0);
  }
  return prefix;
}

int8_t label_of(double ret, double threshold) {
  if (threshold < 0) return ret > 0 ? 1 : 0;
  if (ret < -threshold) return 0;
  if (ret > threshold) return 2;
  return 1;
}

template <typename Count>
WindowPlan plan(const Series& series, const WindowSpec& spec) {
  const std::vector<Count> bad_before = bad_row_prefix<Count>(series, spec.ohlc);
  const std::vector<Count> changes_before = spec.skip_constant ? change_prefix<Count>(series) : std::vector<Count>();
  const int64_t horizon = spec.label_horizon;
  const int32_t line = series.line_channel();

  WindowPlan result;
  for (int64_t k = 0; k < series.segments(); ++k) {
    const int64_t length = series.segment_end(k) - series.segment_begin(k);
    if (length >= spec.seq_len) result.candidates += (length - spec.seq_len) / spec.stride + 1;
  }
  const bool limited = spec.limit >= 0;
  const size_t reserve = static_cast<size_t>(limited && spec.limit < result.candidates ? spec.limit : result.candidates);
  result.starts.reserve(reserve);
  if (horizon > 0) result.labels.reserve(reserve);

  for (int64_t k = 0; k < series.segments(); ++k) {
    const int64_t begin = series.segment_begin(k);
    const int64_t rows = series.segment_end(k);  // one past the segment's last row
    for (int64_t start = begin; start + spec.seq_len <= rows; start += spec.stride) {
      const int64_t end = start + spec.seq_len;  // exclusive
      if (bad_before[static_cast<size_t>(end)] != bad_before[static_cast<size_t>(start)]) {
        ++result.skipped_nonfinite;
        continue;
      }
      if (spec.skip_constant &&
          changes_before[static_cast<size_t>(end)] == changes_before[static_cast<size_t>(start) + 1]) {
        ++result.skipped_nonfinite;
        continue;
      }
      int8_t label = 0;
      if (horizon > 0) {
        const int64_t future = end - 1 + horizon;
        if (future >= rows) {
          ++result.dropped_no_future;
          continue;
        }
        const double c0 = series.row(end - 1)[line];
        const double c1 = series.row(future)[line];
        if (!std::isfinite(c1)) {
          ++result.skipped_nonfinite;
          continue;
        }
        label = label_of(c1 / c0 - 1.0, spec.label_threshold);
      }
      // Past the limit windows are still classified, so the counts describe the whole series.
      if (limited && static_cast<int64_t>(result.starts.size()) >= spec.limit) continue;
      result.starts.push_back(start);
      if (horizon > 0) result.labels.push_back(label);
    }
  }
  return result;
}

}  // namespace

Result<WindowPlan> window_plan(const Series& series, const WindowSpec& spec) {
  KILN_TRY(validate(series, spec));
  if (series.rows < static_cast<int64_t>(std::numeric_limits<uint32_t>::max())) return plan<uint32_t>(series, spec);
  return plan<int64_t>(series, spec);
}

}  // namespace kiln
