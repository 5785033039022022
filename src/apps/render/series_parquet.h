// Parquet input (series_parquet.cpp): a table read through DuckDB's C library (io/duckdb_library.h) into the rows a
// CSV's columns give, so that a one-series table or a long-format panel goes on from there as a CSV's does.
#pragma once

#include <string>

#include "apps/render/series_panel.h"
#include "kiln/status.h"

namespace kiln {

// True when the file begins with Parquet's magic bytes "PAR1" (whatever its extension).
bool parquet_file_is(const std::string& path);

// The table's rows, read like a CSV's columns (same names, case-insensitive, same errors). Prices, volume and market
// cap: any numeric type (NULL is NaN); Date: DATE, TIMESTAMP (with or without a time zone: its UTC date), yyyymmdd
// integers or dates as text; symbols: text or integer ids. UnsupportedFormat naming the npm package and `make deps`
// when DuckDB's library is not in the kiln cache.
Result<CsvRows> series_load_parquet_rows(const std::string& path, const std::string& column, bool ohlc,
                                         const std::string& volume_column, const CsvPanelColumns& panel);

}  // namespace kiln
