// series_load(): picks the reader from the file extension (and for HDF5, from what the named object is; a file that
// begins with PAR1 is Parquet whatever its name).
#include <filesystem>
#include <optional>
#include <string>

#include "apps/render/series_hdf5.h"
#include "apps/render/series_panel.h"
#include "apps/render/series_parquet.h"
#include "kiln/apps/render.h"

namespace kiln {

namespace {

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Splits "file.h5:/group/dataset" at the colon after an .h5/.hdf5 extension. Returns false when the
// path names no HDF5 file; `dataset` is empty when no dataset follows the file name.
bool split_hdf5(const std::string& path, std::string& file, std::string& dataset) {
  const std::string low = lower(path);
  for (const std::string ext : {".h5", ".hdf5"}) {
    size_t at = low.find(ext + ":");
    if (at != std::string::npos) {
      file = path.substr(0, at + ext.size());
      dataset = path.substr(at + ext.size() + 1);
      return true;
    }
    if (ends_with(low, ext)) {
      file = path;
      dataset.clear();
      return true;
    }
  }
  return false;
}

// The symbol and market-cap columns a table (CSV or HDF5) is read with.
CsvPanelColumns panel_columns(const SeriesSource& source) {
  CsvPanelColumns panel;
  panel.symbol_columns = source.symbol_column.empty() ? kSymbolColumnAliases
                                                      : std::vector<std::string>{source.symbol_column};
  panel.symbol_required = !source.symbol_column.empty();
  panel.market_cap_column = source.market_cap_column;
  return panel;
}

}  // namespace

Result<Series> series_load(const SeriesSource& source) {
  const std::string& path = source.path;
  if (path.empty()) return invalid_argument("no input file given");

  std::error_code folder_ec;
  if (std::filesystem::is_directory(path, folder_ec)) return panel_load_folder(path, source);
  const bool panel_asked = !source.symbol_column.empty() || !source.market_cap_column.empty();

  const std::string not_a_table = ": a panel is a table with a symbol column (a CSV, a Parquet file, an HDF5 compound "
                                  "dataset or group of columns) or a folder of CSV files";
  std::string h5_file;
  std::string dataset;
  if (split_hdf5(path, h5_file, dataset)) {
    std::error_code ec;
    if (!std::filesystem::exists(h5_file, ec)) return io_error(h5_file + ": no such file");
    if (dataset.empty()) {
      // series_load_hdf5 lists the datasets the file holds.
      return series_load_hdf5(h5_file, dataset, source.ohlc, source.volume);
    }
    KILN_TRY_ASSIGN(std::optional<CsvRows> rows,
                    series_load_hdf5_rows(h5_file, dataset, source.column, source.ohlc,
                                          source.volume ? source.volume_column : std::string(), panel_columns(source)));
    if (rows) return series_from_rows(std::move(*rows), path, source.market_cap_column);
    if (panel_asked) return invalid_argument(path + not_a_table + " (" + dataset + " is an array of numbers)");
    KILN_TRY_ASSIGN(Series series, series_load_hdf5(h5_file, dataset, source.ohlc, source.volume));
    series.source = path;
    return series;
  }

  const std::string ext = lower(std::filesystem::path(path).extension().string());
  std::error_code ec;
  if (ext == ".parquet" || ext == ".pq" || (std::filesystem::is_regular_file(path, ec) && parquet_file_is(path))) {
    if (!std::filesystem::exists(path, ec)) return io_error(path + ": no such file");
    if (!parquet_file_is(path)) return unsupported_format(path + ": not a Parquet file (it does not begin with PAR1)");
    KILN_TRY_ASSIGN(CsvRows rows, series_load_parquet_rows(path, source.column, source.ohlc,
                                                           source.volume ? source.volume_column : std::string(),
                                                           panel_columns(source)));
    return series_from_rows(std::move(rows), path, source.market_cap_column);
  }
  const bool is_csv = ext == ".csv" || ext == ".txt";
  const bool is_npy = ext == ".npy";
  if (!is_csv && !is_npy) {
    const std::string what = ext.empty() ? std::string("no file extension") : "unknown input type '" + ext + "'";
    return unsupported_format(path + ": " + what +
                              " (expected .csv, .txt, .npy, .parquet, or .h5/.hdf5 followed by :/dataset)");
  }
  if (!std::filesystem::exists(path, ec)) return io_error(path + ": no such file");
  if (is_npy && panel_asked) return invalid_argument(path + not_a_table + " (an .npy file is an array of numbers)");
  if (is_npy) {
    KILN_TRY_ASSIGN(Series series, series_load_npy(path, source.ohlc, source.volume));
    series.source = path;
    return series;
  }
  KILN_TRY_ASSIGN(CsvRows rows, series_load_csv_rows(path, source.column, source.ohlc,
                                                     source.volume ? source.volume_column : std::string(),
                                                     panel_columns(source)));
  return series_from_rows(std::move(rows), path, source.market_cap_column);
}

Result<Series> series_from_rows(CsvRows rows, const std::string& source, const std::string& market_cap_column) {
  if (!rows.symbol_names.empty()) return panel_from_rows(std::move(rows), source);
  if (!market_cap_column.empty()) {
    return invalid_argument(source + ": --market-cap-column is for a panel (no symbol column found)");
  }
  rows.series.source = source;
  return std::move(rows.series);
}

}  // namespace kiln
