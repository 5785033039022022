// Panels (series_panel.h): rows grouped by symbol onto the panel's calendar, and the missing-days policy.
#include "apps/render/series_panel.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace kiln {

namespace {

namespace fs = std::filesystem;

std::string date_text(int32_t yyyymmdd) {
  const std::string digits = std::to_string(yyyymmdd);
  return digits.size() == 8 ? digits.substr(0, 4) + "-" + digits.substr(4, 2) + "-" + digits.substr(6, 2) : digits;
}

bool is_csv(const fs::path& path) {
  std::string ext = path.extension().string();
  for (char& c : ext) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return ext == ".csv" || ext == ".txt";
}

}  // namespace

Result<Series> panel_from_rows(CsvRows rows, const std::string& source) {
  const Series& in = rows.series;
  const auto n = static_cast<size_t>(in.rows);
  if (in.dates.size() != n) return invalid_argument(source + ": a panel needs a Date column (yyyy-mm-dd or yyyymmdd)");
  if (rows.symbol_of_row.size() != n) return invalid_argument(source + ": a panel needs a symbol for every row");
  for (size_t r = 0; r < n; ++r) {
    if (in.dates[r] == 0) {
      return invalid_argument(source + ": data row " + std::to_string(r + 1) + " (symbol " +
                              rows.symbol_names[static_cast<size_t>(rows.symbol_of_row[r])] + ") has no date");
    }
  }
  // Symbols in byte order; each symbol's rows in date order.
  const size_t symbol_count = rows.symbol_names.size();
  std::vector<int32_t> by_name(symbol_count);
  std::iota(by_name.begin(), by_name.end(), 0);
  auto name_of = [&](int32_t symbol) -> const std::string& { return rows.symbol_names[static_cast<size_t>(symbol)]; };
  std::sort(by_name.begin(), by_name.end(), [&](int32_t a, int32_t b) { return name_of(a) < name_of(b); });
  std::vector<int32_t> rank(symbol_count);
  for (size_t k = 0; k < symbol_count; ++k) rank[static_cast<size_t>(by_name[k])] = static_cast<int32_t>(k);
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto symbol_of = [&](int64_t r) { return rows.symbol_of_row[static_cast<size_t>(r)]; };
  auto key = [&](int64_t r) {
    return std::pair{rank[static_cast<size_t>(symbol_of(r))], in.dates[static_cast<size_t>(r)]};
  };
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return key(a) < key(b); });
  for (size_t i = 1; i < n; ++i) {
    if (key(order[i]) == key(order[i - 1])) {
      return invalid_argument(source + ": symbol " + name_of(symbol_of(order[i])) + " has the date " +
                              date_text(in.dates[static_cast<size_t>(order[i])]) + " twice");
    }
  }
  // The panel's calendar: every date of any symbol.
  std::vector<int32_t> calendar = in.dates;
  std::sort(calendar.begin(), calendar.end());
  calendar.erase(std::unique(calendar.begin(), calendar.end()), calendar.end());
  auto position = [&](int32_t date) {
    return std::lower_bound(calendar.begin(), calendar.end(), date) - calendar.begin();
  };

  Series out;
  out.channels = in.channels;
  out.layers = in.layers;
  out.source = source;
  out.column = in.column;
  out.symbol_rows.push_back(0);
  // Each symbol spans its first to its last date of the calendar.
  std::vector<int64_t> first_position(symbol_count);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    const int32_t symbol = rows.symbol_of_row[static_cast<size_t>(order[i])];
    while (j < n && rows.symbol_of_row[static_cast<size_t>(order[j])] == symbol) ++j;
    const int64_t first = position(in.dates[static_cast<size_t>(order[i])]);
    const int64_t last = position(in.dates[static_cast<size_t>(order[j - 1])]);
    first_position[static_cast<size_t>(rank[static_cast<size_t>(symbol)])] = first;
    out.symbols.push_back(rows.symbol_names[static_cast<size_t>(symbol)]);
    out.symbol_rows.push_back(out.symbol_rows.back() + (last - first + 1));
    out.absent_days += (last - first + 1) - static_cast<int64_t>(j - i);
    i = j;
  }
  out.rows = out.symbol_rows.back();
  // Symbols whose dates barely overlap would each be laid out over most of the calendar: a few thousand rows could
  // ask for billions. Refused before anything that size is allocated.
  const int64_t read = static_cast<int64_t>(n);
  if (out.rows > kPanelMaxExpansion * read + kPanelFreeRows) {
    return invalid_argument(source + ": the panel's calendar (" + std::to_string(calendar.size()) + " dates) would " +
                            "lay its " + std::to_string(read) + " rows out as " + std::to_string(out.rows) +
                            " (over " + std::to_string(kPanelMaxExpansion) + " times as many): its symbols' dates " +
                            "hardly overlap; render them as separate series");
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  out.values.assign(static_cast<size_t>(out.rows) * static_cast<size_t>(out.channels), nan);
  out.dates.resize(static_cast<size_t>(out.rows));
  const bool caps = rows.market_caps.size() == n;
  if (caps) out.market_caps.assign(static_cast<size_t>(out.rows), nan);
  for (size_t k = 0; k < symbol_count; ++k) {
    const int64_t begin = out.symbol_rows[k];
    for (int64_t r = begin; r < out.symbol_rows[k + 1]; ++r) {
      out.dates[static_cast<size_t>(r)] = calendar[static_cast<size_t>(first_position[k] + r - begin)];
    }
  }
  size_t symbol_index = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto r = static_cast<size_t>(order[i]);
    while (rank[static_cast<size_t>(rows.symbol_of_row[r])] != static_cast<int32_t>(symbol_index)) ++symbol_index;
    const int64_t row = out.symbol_rows[symbol_index] + position(in.dates[r]) - first_position[symbol_index];
    std::copy(in.row(static_cast<int64_t>(r)), in.row(static_cast<int64_t>(r)) + in.channels,
              out.values.data() + row * out.channels);
    if (caps) out.market_caps[static_cast<size_t>(row)] = rows.market_caps[r];
  }
  return out;
}

Result<Series> panel_load_folder(const std::string& folder, const SeriesSource& source) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    if (entry.is_regular_file(ec) && is_csv(entry.path())) files.push_back(entry.path());
  }
  if (ec) return io_error(folder + ": cannot list: " + ec.message());
  if (files.empty()) return invalid_argument(folder + ": no .csv or .txt file (a panel folder holds one per symbol)");
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) { return a.stem() < b.stem(); });
  CsvRows all;
  const CsvPanelColumns columns{{}, false, source.market_cap_column};
  for (const fs::path& file : files) {
    const std::string symbol = file.stem().string();
    if (!all.symbol_names.empty() && all.symbol_names.back() == symbol) {
      return invalid_argument(folder + ": two files for the symbol " + symbol);
    }
    KILN_TRY_ASSIGN(CsvRows one, series_load_csv_rows(file.string(), source.column, source.ohlc,
                                                      source.volume ? source.volume_column : std::string(), columns));
    if (one.series.dates.size() != static_cast<size_t>(one.series.rows)) {
      return invalid_argument(file.string() + ": a panel file needs a Date column (yyyy-mm-dd or yyyymmdd)");
    }
    if (all.symbol_names.empty()) {
      all.series.channels = one.series.channels;
      all.series.layers = one.series.layers;
      all.series.column = one.series.column;
    }
    const auto id = static_cast<int32_t>(all.symbol_names.size());
    all.symbol_names.push_back(symbol);
    all.symbol_of_row.insert(all.symbol_of_row.end(), static_cast<size_t>(one.series.rows), id);
    all.series.values.insert(all.series.values.end(), one.series.values.begin(), one.series.values.end());
    all.series.dates.insert(all.series.dates.end(), one.series.dates.begin(), one.series.dates.end());
    all.market_caps.insert(all.market_caps.end(), one.market_caps.begin(), one.market_caps.end());
    all.series.rows += one.series.rows;
  }
  return panel_from_rows(std::move(all), folder);
}

MissingDaysCount series_missing_days_apply(const Series& series, MissingDays policy, Series* filled) {
  MissingDaysCount count;
  const int32_t prices = series.price_channels();
  const bool has_volume = series.layers >= 1;
  const int32_t line = series.line_channel();
  const bool fill = policy == MissingDays::kFill && filled != nullptr;
  std::vector<float> row(static_cast<size_t>(series.channels));
  for (int64_t k = 0; k < series.segments(); ++k) {
    float last_close = std::numeric_limits<float>::quiet_NaN();
    for (int64_t r = series.segment_begin(k); r < series.segment_end(k); ++r) {
      std::copy(series.row(r), series.row(r) + series.channels, row.begin());
      bool prices_there = true;
      for (int32_t c = 0; c < prices; ++c) prices_there = prices_there && std::isfinite(row[static_cast<size_t>(c)]);
      const bool volume_there = !has_volume || std::isfinite(row[static_cast<size_t>(prices)]);
      if (!prices_there || !volume_there) {
        ++count.missing;
        if (fill && (prices_there || std::isfinite(last_close))) {
          if (!prices_there) std::fill(row.begin(), row.begin() + prices, last_close);
          if (has_volume) row[static_cast<size_t>(prices)] = 0.0F;
          std::copy(row.begin(), row.end(), filled->values.begin() + r * series.channels);
          ++count.filled;
          prices_there = true;
        }
      }
      if (prices_there) last_close = row[static_cast<size_t>(line)];
    }
  }
  return count;
}

}  // namespace kiln
