// Panels of many symbols: a long-format table (a CSV, or an HDF5 compound dataset or group of columns, with a symbol
// column) or a folder of one CSV per symbol, read into one Series whose symbols lie back to back (Series::symbols / symbol_rows), each on the panel's calendar.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/apps/render.h"

namespace kiln {

// The symbol column names series_load tries when SeriesSource::symbol_column is empty, in this order.
inline const std::vector<std::string> kSymbolColumnAliases = {"Symbol", "Ticker", "PERMNO", "StockID"};

struct CsvPanelColumns {
  std::vector<std::string> symbol_columns;  // the first present is the symbol column; empty: none read
  bool symbol_required = false;             // an error when none is present
  std::string market_cap_column;            // "" reads none; else it must be present
};

// A CSV's rows as read, in file order, with each row's symbol (when a symbol column was found) and market cap.
struct CsvRows {
  Series series;
  std::vector<int32_t> symbol_of_row;     // index into symbol_names per row; empty without a symbol column
  std::vector<std::string> symbol_names;  // in order of first appearance
  std::vector<float> market_caps;         // per row; empty without a market-cap column
};

Result<CsvRows> series_load_csv_rows(const std::string& path, const std::string& column, bool ohlc,
                                     const std::string& volume_column, const CsvPanelColumns& panel);

// yyyymmdd of a date as the CSV reader takes it: "yyyy-mm-dd", "yyyy/mm/dd" or "yyyymmdd" (a time after it is
// ignored); 0 for anything else.
int32_t date_parse(std::string_view text);
// yyyymmdd of the day n days after 1970-01-01; 0 outside the years 1 to 9999.
int32_t date_of_day(int64_t n);

// What series_load makes of a table's rows (CSV or HDF5): the panel when they have symbols, else the one series
// (an error when a market-cap column was asked for without a symbol column).
Result<Series> series_from_rows(CsvRows rows, const std::string& source, const std::string& market_cap_column);

// A panel laid out on its calendar may hold at most this many times the rows read, plus kPanelFreeRows.
inline constexpr int64_t kPanelMaxExpansion = 16;
inline constexpr int64_t kPanelFreeRows = 1 << 20;

// The panel of `rows` (which must have symbols and dates): symbols sorted (byte order), each symbol's rows sorted by
// date (a date twice for one symbol is an error), and every date of the panel between a symbol's first and last
// date that the symbol lacks added as a row of NaN (counted in absent_days); refused over kPanelMaxExpansion.
Result<Series> panel_from_rows(CsvRows rows, const std::string& source);

// A folder of CSV files (.csv/.txt), one per symbol, the file's stem its symbol.
Result<Series> panel_load_folder(const std::string& folder, const SeriesSource& source);

}  // namespace kiln
