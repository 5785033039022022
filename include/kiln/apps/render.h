// Time series input (CSV, NPY, HDF5) and sliding-window planning.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

// Column order of a 4-channel series.
enum OhlcChannel : int32_t { kOpen = 0, kHigh = 1, kLow = 2, kClose = 3 };

// A loaded series: `rows` rows of `channels` interleaved float32 values (1 = one column, 4 = OHLC).
// Non-finite values are kept; windows that contain them are skipped by window_plan().
struct Series {
  std::vector<float> values;
  int64_t rows = 0;
  int32_t channels = 1;
  std::string source;  // file (and dataset) it came from
  std::string column;  // "Close", "Open,High,Low,Close", "dataset", ...

  const float* row(int64_t i) const { return values.data() + i * channels; }
  // The channel a line chart draws: the only one, or Close of OHLC.
  int32_t line_channel() const { return channels == 4 ? kClose : 0; }
};

struct SeriesSource {
  std::string path;            // "prices.csv", "x.npy", "file.h5:/group/dataset"
  std::string column = "Close";  // CSV column for line charts (case-insensitive)
  bool ohlc = false;           // read Open/High/Low/Close (CSV) or require (N,4) (NPY/HDF5)
};

// Dispatches on the extension (.csv/.txt, .npy, .h5/.hdf5 with ":/dataset").
// Errors name the file, and where it applies the row (1-based, header = row 1) and column.
Result<Series> series_load(const SeriesSource& source);
Result<Series> series_load_csv(const std::string& path, const std::string& column, bool ohlc);
Result<Series> series_load_npy(const std::string& path, bool ohlc);
Result<Series> series_load_hdf5(const std::string& path, const std::string& dataset, bool ohlc);

// A deterministic synthetic OHLC random walk (the `--demo` input).
Series series_demo(int64_t points, uint64_t seed = 20240601);

struct WindowSpec {
  int64_t seq_len = 100;
  int64_t stride = 1;
  int64_t limit = -1;          // at most this many windows (after skipping); -1 = all
  int64_t label_horizon = 0;   // 0 = no labels
  double label_threshold = -1; // < 0: 2 classes (1 = up, 0 = not up); >= 0: 3 classes 0 down / 1 flat / 2 up
  bool ohlc = false;           // windows need all four channels finite
};

// Which windows become images. Windows are views: start rows into the series, never copies.
struct WindowPlan {
  std::vector<int64_t> starts;   // start row of each kept window
  std::vector<int8_t> labels;    // empty unless label_horizon > 0
  int64_t candidates = 0;        // windows the series offers at this stride
  int64_t skipped_nonfinite = 0; // windows dropped for NaN/inf
  int64_t dropped_no_future = 0; // windows dropped because the label horizon runs past the end
};

Result<WindowPlan> window_plan(const Series& series, const WindowSpec& spec);

}  // namespace kiln
