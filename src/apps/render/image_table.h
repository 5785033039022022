// Per-image facts of a render job's windows: the symbol, the first and last day, the forward returns and the market
// cap. The jkx-dat sink writes them as its label tables; a panel's HDF5 output stores them beside the images.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/apps/render.h"

namespace kiln {

struct ImageTable {
  std::vector<std::string> symbols;  // the symbols the images name
  std::vector<int32_t> symbol;       // per image: index into symbols
  std::vector<int32_t> start_date;   // yyyymmdd of the window's first day
  std::vector<int32_t> end_date;     // yyyymmdd of its last day
  // Close `days` rows after the last day / the last day's close - 1, within the image's own symbol; NaN past the
  // symbol's last row or where either close is missing.
  std::vector<double> ret_5d;
  std::vector<double> ret_20d;
  std::vector<double> ret_60d;
  std::vector<double> market_cap;  // on the last day; NaN without a market-cap column

  int64_t size() const { return static_cast<int64_t>(end_date.size()); }
  const std::string& symbol_of(int64_t i) const { return symbols[static_cast<size_t>(symbol[static_cast<size_t>(i)])]; }
  // Appends `more`'s rows (its symbols mapped onto this table's, added where new).
  void append(const ImageTable& more);
};

// The table of the windows starting at `starts` (rows of `series`), `seq_len` days each. A panel names each image's
// symbol; one series is named `single_symbol`. Needs the series' dates.
Result<ImageTable> image_table_make(const Series& series, const std::vector<int64_t>& starts, int64_t seq_len,
                                    const std::string& single_symbol);

}  // namespace kiln
