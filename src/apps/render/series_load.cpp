// series_load(): picks the reader from the file extension.
#include <filesystem>
#include <string>

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

}  // namespace

Result<Series> series_load(const SeriesSource& source) {
  const std::string& path = source.path;
  if (path.empty()) return invalid_argument("no input file given");

  std::string h5_file;
  std::string dataset;
  if (split_hdf5(path, h5_file, dataset)) {
    std::error_code ec;
    if (!std::filesystem::exists(h5_file, ec)) return io_error(h5_file + ": no such file");
    if (dataset.empty()) {
      // series_load_hdf5 lists the datasets the file holds.
      return series_load_hdf5(h5_file, dataset, source.ohlc, source.volume);
    }
    KILN_TRY_ASSIGN(Series series, series_load_hdf5(h5_file, dataset, source.ohlc, source.volume));
    series.source = path;
    return series;
  }

  const std::string ext = lower(std::filesystem::path(path).extension().string());
  const bool is_csv = ext == ".csv" || ext == ".txt";
  const bool is_npy = ext == ".npy";
  if (!is_csv && !is_npy) {
    const std::string what = ext.empty() ? std::string("no file extension") : "unknown input type '" + ext + "'";
    return unsupported_format(path + ": " + what + " (expected .csv, .txt, .npy, or .h5/.hdf5 followed by :/dataset)");
  }
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return io_error(path + ": no such file");
  if (is_npy) {
    KILN_TRY_ASSIGN(Series series, series_load_npy(path, source.ohlc, source.volume));
    series.source = path;
    return series;
  }
  KILN_TRY_ASSIGN(Series series, series_load_csv(path, source.column, source.ohlc, source.volume ? source.volume_column : std::string()));
  series.source = path;
  return series;
}

}  // namespace kiln
