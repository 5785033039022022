// The render application: series (CSV, NPY, HDF5) -> sliding windows -> chart images -> a dataset (HDF5, PNG/JPEG
// folders, NPY), resumable. `kiln render` and kiln.render_job run the same job.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/enum_names.h"
#include "kiln/exec.h"
#include "kiln/ops/render.h"
#include "kiln/params.h"
#include "kiln/scale.h"
#include "kiln/status.h"

namespace kiln {

// Column order of a 4-channel series.
enum OhlcChannel : int32_t { kOpen = 0, kHigh = 1, kLow = 2, kClose = 3 };

// A loaded series: `rows` rows of `channels` interleaved float32 values: the prices (1 = one column, 4 = OHLC), then
// `layers` more (the volume, then moving averages: what a chart draws besides the prices).
// Non-finite values are kept; windows that contain them are skipped by window_plan().
struct Series {
  std::vector<float> values;
  int64_t rows = 0;
  int32_t channels = 1;
  int32_t layers = 0;
  std::string source;  // file (and dataset) it came from
  std::string column;  // "Close", "Open,High,Low,Close", "dataset", ...
  std::vector<int32_t> dates;  // yyyymmdd of each row when the input has a Date column (CSV), else empty
  // A panel (many symbols): each symbol's rows lie back to back, in the order of `symbols` (sorted); symbol k holds
  // rows [symbol_rows[k], symbol_rows[k + 1]). Empty for one series. Windows never cross two symbols.
  std::vector<std::string> symbols;
  std::vector<int64_t> symbol_rows;  // symbols.size() + 1 entries
  std::vector<float> market_caps;    // each row's market cap when a market-cap column was read, else empty
  int64_t absent_days = 0;           // panel rows added for dates of the panel absent from a symbol (all NaN)

  const float* row(int64_t i) const { return values.data() + i * channels; }
  bool is_panel() const { return !symbols.empty(); }
  // Rows [begin, end) of segment k: a symbol of a panel, or the whole series (one segment).
  int64_t segments() const { return is_panel() ? static_cast<int64_t>(symbols.size()) : 1; }
  int64_t segment_begin(int64_t k) const { return is_panel() ? symbol_rows[static_cast<size_t>(k)] : 0; }
  int64_t segment_end(int64_t k) const { return is_panel() ? symbol_rows[static_cast<size_t>(k) + 1] : rows; }
  int32_t price_channels() const { return channels - layers; }
  // The channel a line chart draws: the only one, or Close of OHLC.
  int32_t line_channel() const { return price_channels() == 4 ? kClose : 0; }
};

struct SeriesSource {
  std::string path;            // "prices.csv", "x.npy", "file.h5:/group/dataset"
  std::string column = "Close";  // CSV column for line charts (case-insensitive)
  bool ohlc = false;           // read Open/High/Low/Close (CSV) or require (N,4) (NPY/HDF5)
  bool volume = false;         // also read the volume: a CSV column, or the last column of (N,2)/(N,5) NPY/HDF5
  std::string volume_column = "Volume";  // CSV column of the volume (case-insensitive)
  // A long-format panel: the column naming each row's symbol, in a CSV or an HDF5 table (a compound dataset or a group
  // of 1-D columns); "" looks for Symbol, Ticker, PERMNO or StockID (the first present; none: one series). A folder
  // of CSV files is a panel whatever this says (symbol = file stem).
  std::string symbol_column;
  std::string market_cap_column;  // a panel's column of the market cap, stored with each image's labels
};

// What a missing day of a series is, and what a window holding one becomes. A day is missing when a value read
// for it (the prices, the volume) is empty/NaN/inf, or, in a panel, when a date of the panel (the union of every
// symbol's dates) between a symbol's first and last date is absent from it.
// kSkip: a window holding a missing day is not rendered (counted as skipped). kFill: a missing day becomes a flat
// bar at the symbol's last close before it (open = high = low = close) with zero volume; a day whose prices are
// there but whose volume is not keeps its prices with zero volume; missing days before a symbol's first complete
// day stay missing (their windows are skipped).
enum class MissingDays : uint8_t { kSkip = 0, kFill };
inline constexpr EnumName<MissingDays> kMissingDaysNames[] = {{MissingDays::kSkip, "skip"},
                                                              {MissingDays::kFill, "fill"}};

struct MissingDaysCount {
  int64_t missing = 0;  // missing days (rows) of the series
  int64_t filled = 0;   // of which filled (kFill)
};
// Counts the missing days of `series` (before moving averages are added); under kFill writes the filled values
// into `filled` (the same rows and channels; may be &series), when given.
MissingDaysCount series_missing_days_apply(const Series& series, MissingDays policy, Series* filled);

// `series` with a moving average of its line channel appended for each window length in `windows` (layers grow):
// row t holds the mean of rows t-N+1..t, NaN where the series has fewer than N rows up to t or one is not finite.
Result<Series> series_with_moving_averages(const Series& series, const std::vector<int32_t>& windows);

// Dispatches on the extension (.csv/.txt, .npy, .h5/.hdf5 with ":/dataset"); a folder is a panel of one CSV file
// per symbol; a CSV with a symbol column is a long-format panel (series_panel.cpp).
// Errors name the file, and where it applies the row (1-based, header = row 1) and column.
Result<Series> series_load(const SeriesSource& source);
// With a volume (volume_column not empty; `volume` true for NPY/HDF5 (N, 2) or (N, 5)), layers = 1.
Result<Series> series_load_csv(const std::string& path, const std::string& column, bool ohlc,
                               const std::string& volume_column = "");
Result<Series> series_load_npy(const std::string& path, bool ohlc, bool volume = false);
Result<Series> series_load_hdf5(const std::string& path, const std::string& dataset, bool ohlc, bool volume = false);

// A deterministic synthetic OHLC random walk (the `--demo` input); with `volume`, a volume channel after the prices
// (layers = 1; the prices are the same as without).
Series series_demo(int64_t points, uint64_t seed = 20240601, bool volume = false);

struct WindowSpec {
  int64_t seq_len = 100;
  int64_t stride = 1;
  int64_t limit = -1;          // at most this many windows (after skipping); -1 = all
  int64_t label_horizon = 0;   // 0 = no labels
  double label_threshold = -1; // < 0: 2 classes (1 = up, 0 = not up); >= 0: 3 classes 0 down / 1 flat / 2 up
  bool ohlc = false;           // windows need all four channels finite
  bool skip_constant = false;  // encodings: a window whose drawn closes are all equal is skipped (as skipped_nonfinite)
};

// Which windows become images. Windows are views: start rows into the series, never copies.
struct WindowPlan {
  std::vector<int64_t> starts;   // start row of each kept window
  std::vector<int8_t> labels;    // empty unless label_horizon > 0
  int64_t candidates = 0;        // windows the series offers at this stride
  int64_t skipped_nonfinite = 0; // windows dropped for NaN/inf (and constant windows with skip_constant)
  int64_t dropped_no_future = 0; // windows dropped because the label horizon runs past the end
};

Result<WindowPlan> window_plan(const Series& series, const WindowSpec& spec);

// seq_len, stride, limit, label_horizon, label_threshold.
const ParamTable<WindowSpec>& window_params();

// ---- output ------------------------------------------------------------------------------------------------

// kAuto: npy for a path ending in .npy, else hdf5.
// kJkxDat: Jiang-Kelly-Xiu's layout, raw uint8 {stem}_{year}_images.dat (N, H, W) + {stem}_{year}_labels.csv.
enum class OutputFormat : uint8_t { kAuto = 0, kHdf5, kPng, kJpeg, kNpy, kJkxDat };
enum class Compression : uint8_t { kZstd = 0, kGzip, kNone };

inline constexpr EnumName<OutputFormat> kOutputFormatNames[] = {
    {OutputFormat::kAuto, "auto"}, {OutputFormat::kHdf5, "hdf5"}, {OutputFormat::kPng, "png"},
    {OutputFormat::kJpeg, "jpeg"}, {OutputFormat::kNpy, "npy"},   {OutputFormat::kJkxDat, "jkx-dat"},
    {OutputFormat::kHdf5, "h5"},   {OutputFormat::kJpeg, "jpg"}};
inline constexpr EnumName<Compression> kCompressionNames[] = {
    {Compression::kZstd, "zstd"}, {Compression::kGzip, "gzip"}, {Compression::kNone, "none"},
    {Compression::kGzip, "deflate"}};
inline const char* output_format_name(OutputFormat format) { return enum_name(kOutputFormatNames, format); }
inline Result<OutputFormat> output_format_parse(const std::string& name) {
  return enum_parse(kOutputFormatNames, name, "output format");
}
inline const char* compression_name(Compression c) { return enum_name(kCompressionNames, c); }
inline Result<Compression> compression_parse(const std::string& name) {
  return enum_parse(kCompressionNames, name, "compression");
}
// What kAuto means for `path`; other formats as given.
OutputFormat output_format_resolve(OutputFormat format, const std::string& path);

struct OutputSpec {
  std::string path;  // file (hdf5, npy) or folder (png, jpeg)
  OutputFormat format = OutputFormat::kAuto;
  Compression compression = Compression::kZstd;
  int32_t compression_level = 1;
  int64_t images_per_file = 0;  // > 0: HDF5 shards {stem}_batch_{idx:04d}.h5 + manifest + VDS {stem}.h5
  int32_t jpeg_quality = 95;
  bool overwrite = false;       // replace an existing output
  bool resume = false;          // continue a killed run with the same settings
};

// ---- the job -----------------------------------------------------------------------------------------------

// Jiang, Kelly and Xiu (2023)'s images: OHLC bars 3 px a day, white on black, volume in the bottom fifth, and the
// moving average over the window's length; 5/20/60 days at 32x15, 64x60, 96x180 (H x W).
enum class RenderPreset : uint8_t { kNone = 0, kJkx5, kJkx20, kJkx60 };
inline constexpr EnumName<RenderPreset> kRenderPresetNames[] = {{RenderPreset::kNone, "none"},
                                                                {RenderPreset::kJkx5, "jkx5"},
                                                                {RenderPreset::kJkx20, "jkx20"},
                                                                {RenderPreset::kJkx60, "jkx60"}};

struct RenderJobConfig {
  RenderPreset preset = RenderPreset::kNone;  // sets seq_len, style, size, inks, volume and the moving average
  std::vector<int32_t> moving_averages;       // window lengths of the moving-average lines
  SeriesSource input;
  std::shared_ptr<const Series> series;  // an in-memory series (Python callers); takes precedence over input
  bool demo = false;                     // the built-in synthetic OHLC random walk instead of an input
  int64_t demo_points = 10099;
  WindowSpec windows;
  RenderParams render{.width = 0, .height = 0};  // 0: 800 x 500, 4 x seq_len wide for OHLC; encodings seq_len
  int32_t dpi = 100;  // stored in the resolution attribute; pixels are given directly
  OutputSpec output;
  ExecSettings exec = ExecSettings{.batch_size = 1024};  // batch_size: images per write batch and GPU launch
  MissingDays missing_days = MissingDays::kSkip;
  std::string preview;  // a PNG grid of preview_count images sampled evenly across the job, captioned
  int32_t preview_count = 16;
  ShardSettings shard;  // a piece of the job (HDF5 output {stem}.shard-I-of-N.h5, joined by kiln merge)

  // Every setting that determines the output (not threads, batch size or mode), as JSON.
  std::string output_config_json() const;
};

// Every setting of the job, declared once (the CLI's flags, Python's keywords, the config file's keys).
const ParamTable<RenderJobConfig>& render_job_params();

// Reads a config.yaml into `config`: the predecessor's keys (image.seq_len, image.line_width,
// image.resolution.{width,height,dpi}, image.rendering.{mode,gpu_batch_size,fallback_on_error},
// image.storage.{format,mode,images_per_file,compression}, image.colors.{bullish,bearish} in 0..1) and, under
// image:, any declared setting by its name (stride: 5, style: ohlc, ...). Other sections (data, paths, ...) are
// listed in *ignored.
Status render_config_apply_yaml(const std::string& path, RenderJobConfig* config, std::vector<std::string>* ignored);

struct RenderProgress {
  int64_t done = 0;     // images durable (including resumed ones)
  int64_t resumed = 0;  // images that were already there when this run started
  int64_t total = 0;
  double seconds = 0;
  std::string backend;
};

struct RenderJobSummary {
  int64_t images = 0;
  int64_t rendered = 0;       // images rendered by this run (images - resumed)
  int64_t resumed_from = 0;
  std::vector<std::string> resume_notes;  // what resume found and redid, e.g. a damaged part rendered again
  int64_t skipped_nonfinite = 0;
  int64_t dropped_no_future = 0;
  int64_t symbols = 0;       // a panel's symbols (0: one series)
  int64_t missing_days = 0;  // days missing from the input (see MissingDays), absent dates included
  int64_t absent_days = 0;   // of which absent from a panel symbol's dates
  int64_t filled_days = 0;   // of which filled (--missing-days fill)
  double seconds = 0;
  uint64_t output_bytes = 0;  // encoded image bytes of the whole output (including resumed units)
  uint64_t raw_bytes = 0;     // uncompressed bytes of the same images
  std::string backend;
  std::string placement_reason;
  std::string output;
  std::string shard;  // "piece 2 of 4 (SLURM_ARRAY_TASK_ID=2 ...)", empty for a whole job
  int32_t threads = 0;
  int64_t fallbacks = 0;                     // fallback events (batch halvings, moves to the CPU)
  std::vector<std::string> fallback_events;  // each kind once, with its reason
  std::string run_report;                    // JSON stored with the output
  std::string stage_table;                   // per-stage pipeline statistics, bottleneck named
};

using ProgressFn = std::function<void(const RenderProgress&)>;

// `log` receives one line per notable event (placement, each kind of fallback); it may be called from workers.
Result<RenderJobSummary> render_job_run(const RenderJobConfig& config, const ProgressFn& progress = {},
                                        const LogFn& log = {});

}  // namespace kiln
