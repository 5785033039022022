// image_table_make(): each window's symbol, dates and forward returns, from the series it was planned on.
#include "apps/render/image_table.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

namespace kiln {

void ImageTable::append(const ImageTable& more) {
  std::unordered_map<std::string, int32_t> known;
  for (size_t k = 0; k < symbols.size(); ++k) known.emplace(symbols[k], static_cast<int32_t>(k));
  std::vector<int32_t> mapped(more.symbols.size());
  for (size_t k = 0; k < more.symbols.size(); ++k) {
    const auto [at, added] = known.try_emplace(more.symbols[k], static_cast<int32_t>(symbols.size()));
    if (added) symbols.push_back(more.symbols[k]);
    mapped[k] = at->second;
  }
  for (const int32_t s : more.symbol) symbol.push_back(mapped[static_cast<size_t>(s)]);
  start_date.insert(start_date.end(), more.start_date.begin(), more.start_date.end());
  end_date.insert(end_date.end(), more.end_date.begin(), more.end_date.end());
  ret_5d.insert(ret_5d.end(), more.ret_5d.begin(), more.ret_5d.end());
  ret_20d.insert(ret_20d.end(), more.ret_20d.begin(), more.ret_20d.end());
  ret_60d.insert(ret_60d.end(), more.ret_60d.begin(), more.ret_60d.end());
  market_cap.insert(market_cap.end(), more.market_cap.begin(), more.market_cap.end());
}

Result<ImageTable> image_table_make(const Series& series, const std::vector<int64_t>& starts, int64_t seq_len,
                                    const std::string& single_symbol) {
  if (series.dates.size() != static_cast<size_t>(series.rows)) {
    return invalid_argument(series.source + ": the images' dates need a Date column (or --demo)");
  }
  ImageTable table;
  table.symbols = series.is_panel() ? series.symbols : std::vector<std::string>{single_symbol};
  const int32_t line = series.line_channel();
  const size_t n = starts.size();
  table.symbol.reserve(n);
  table.start_date.reserve(n);
  table.end_date.reserve(n);
  for (std::vector<double>* column : {&table.ret_5d, &table.ret_20d, &table.ret_60d, &table.market_cap}) {
    column->reserve(n);
  }
  for (const int64_t start : starts) {
    int64_t k = 0;
    if (series.is_panel()) {
      const auto& rows = series.symbol_rows;
      k = std::upper_bound(rows.begin(), rows.end(), start) - rows.begin() - 1;
    }
    const int64_t end = start + seq_len - 1;
    const int64_t limit = series.segment_end(k);
    const int32_t start_date = series.dates[static_cast<size_t>(start)];
    const int32_t end_date = series.dates[static_cast<size_t>(end)];
    if (start_date == 0 || end_date == 0) {
      return invalid_argument(series.source + ": row " + std::to_string((start_date == 0 ? start : end) + 2) +
                              " has no date");
    }
    auto ret = [&](int64_t days) {
      if (end + days >= limit) return std::nan("");
      return static_cast<double>(series.row(end + days)[line]) / static_cast<double>(series.row(end)[line]) - 1.0;
    };
    table.symbol.push_back(static_cast<int32_t>(k));
    table.start_date.push_back(start_date);
    table.end_date.push_back(end_date);
    table.ret_5d.push_back(ret(5));
    table.ret_20d.push_back(ret(20));
    table.ret_60d.push_back(ret(60));
    const bool has_cap = !series.market_caps.empty();
    table.market_cap.push_back(has_cap ? static_cast<double>(series.market_caps[static_cast<size_t>(end)])
                                       : std::nan(""));
  }
  return table;
}

}  // namespace kiln
