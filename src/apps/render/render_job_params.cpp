// The render job's settings, declared once: `kiln render` flags, kiln.render_job keywords, config-file keys.
#include "kiln/apps/render.h"

namespace kiln {

const ParamTable<RenderJobConfig>& render_job_params() {
  static const ParamTable<RenderJobConfig> table = [] {
    using C = RenderJobConfig;
    ParamTable<C> t;
    t.add({.name = "output", .help = "Output file (.h5, .npy) or folder (png, jpeg)", .required = true},
          [](C& c) -> std::string& { return c.output.path; });
    t.add_choice({.name = "format", .help = "Output format (auto: npy for a .npy path, else hdf5)"},
                 [](C& c) -> OutputFormat& { return c.output.format; }, kOutputFormatNames, "output format");
    t.add_choice({.name = "compression", .help = "HDF5 image compression"},
                 [](C& c) -> Compression& { return c.output.compression; }, kCompressionNames, "compression");
    t.add({.name = "compression_level", .help = "Compression level (zstd 1-22, gzip and PNG 0-9)", .min = 0,
           .max = 22},
          [](C& c) -> int32_t& { return c.output.compression_level; });
    t.add({.name = "jpeg_quality", .help = "JPEG quality", .min = 1, .max = 100},
          [](C& c) -> int32_t& { return c.output.jpeg_quality; });
    t.add({.name = "images_per_file", .help = "Shard HDF5 output: this many images per file, plus a manifest and a "
                                              "virtual dataset (0: one file)",
           .min = 0},
          [](C& c) -> int64_t& { return c.output.images_per_file; });
    t.add({.name = "resume", .help = "Continue a killed run of the same job"},
          [](C& c) -> bool& { return c.output.resume; });
    t.add({.name = "overwrite", .help = "Replace an existing output"}, [](C& c) -> bool& { return c.output.overwrite; });
    t.add({.name = "column", .help = "CSV column of a line chart (case-insensitive)"},
          [](C& c) -> std::string& { return c.input.column; });
    t.add({.name = "ohlc", .help = "Read Open/High/Low/Close (line charts draw Close)"},
          [](C& c) -> bool& { return c.input.ohlc; });
    t.add({.name = "volume_column", .help = "CSV column of the volume (with --volume; case-insensitive)"},
          [](C& c) -> std::string& { return c.input.volume_column; });
    t.add({.name = "symbol_column",
           .help = "A panel's column of each row's symbol, in a CSV or an HDF5 table (\"\": Symbol, Ticker, PERMNO or "
                   "StockID if present; a folder input is a panel of one CSV per symbol)"},
          [](C& c) -> std::string& { return c.input.symbol_column; });
    t.add({.name = "market_cap_column", .help = "A panel's column of the market cap, stored with each image"},
          [](C& c) -> std::string& { return c.input.market_cap_column; });
    t.add_choice({.name = "missing_days",
                  .help = "A window holding a missing day (a NaN/empty value, or a panel date the symbol lacks): "
                          "skip it, or fill the day as a flat bar at the last close with zero volume"},
                 [](C& c) -> MissingDays& { return c.missing_days; }, kMissingDaysNames, "missing-days policy");
    t.add_custom({.name = "moving_average", .type = ParamType::kFloats,
                  .help = "Moving-average lines over these many days each (a comma list); a window's first days "
                          "average the rows before it; windows without enough history are skipped",
                  .min = 1, .max = 1 << 24, .min_count = 0, .max_count = 16},
                 [](C& c, const ParamValue& v) {
                   c.moving_averages.clear();
                   for (const double n : std::get<std::vector<double>>(v)) {
                     if (n != static_cast<double>(static_cast<int32_t>(n))) {
                       return invalid_argument("moving_average: window lengths are whole days");
                     }
                     c.moving_averages.push_back(static_cast<int32_t>(n));
                   }
                   return Status::ok();
                 },
                 [](const C& c) {
                   return ParamValue(std::vector<double>(c.moving_averages.begin(), c.moving_averages.end()));
                 });
    t.add_choice({.name = "preset",
                  .help = "Jiang-Kelly-Xiu images: jkx5/jkx20/jkx60 = 5/20/60 days at 32x15/64x60/96x180, OHLC bars "
                          "3 px a day, white on black, volume, the moving average over the window (sets those "
                          "settings)"},
                 [](C& c) -> RenderPreset& { return c.preset; }, kRenderPresetNames, "preset");
    t.include(window_params(), [](C& c) -> WindowSpec& { return c.windows; });
    // moving_averages (the op's count of average channels) follows from moving_average, the job's window lengths.
    t.include(render_params(), [](C& c) -> RenderParams& { return c.render; },
              {"width", "height", "line_width", "style", "background", "ink", "ink_bullish", "ink_bearish", "dtype",
               "volume", "volume_height", "volume_gap", "bar_gap", "mtf_bins", "rp_threshold", "color",
               "color_background", "color_line", "color_up", "color_down", "color_volume_up", "color_volume_down",
               "color_averages"});
    t.spec_update("width", [](ParamSpec& s) { s.default_text = "800; OHLC: 4 x seq_len; gasf/gadf/mtf/rp: seq_len"; });
    t.spec_update("height", [](ParamSpec& s) { s.default_text = "500; gasf/gadf/mtf/rp: seq_len"; });
    t.add({.name = "dpi", .help = "Stored in the resolution attribute (pixels are given directly)", .min = 1,
           .max = 10000},
          [](C& c) -> int32_t& { return c.dpi; });
    t.add({.name = "preview",
           .help = "Write a PNG grid of 16 images here, sampled evenly from the first to the last, each with its index"},
          [](C& c) -> std::string& { return c.preview; });
    t.add({.name = "demo", .help = "Render the built-in synthetic OHLC random walk instead of an input"},
          [](C& c) -> bool& { return c.demo; });
    t.add({.name = "demo_points", .help = "Rows of the demo series", .min = 2, .max = 1 << 30},
          [](C& c) -> int64_t& { return c.demo_points; });
    t.include(exec_params(), [](C& c) -> ExecSettings& { return c.exec; });
    t.include(shard_params(), [](C& c) -> ShardSettings& { return c.shard; });
    return t;
  }();
  return table;
}

const ParamTable<WindowSpec>& window_params() {
  static const ParamTable<WindowSpec> table = [] {
    using W = WindowSpec;
    ParamTable<W> t;
    t.add({.name = "seq_len", .help = "Window length", .min = 2, .max = 1 << 24},
          [](W& w) -> int64_t& { return w.seq_len; });
    t.add({.name = "stride", .help = "Rows between window starts", .min = 1}, [](W& w) -> int64_t& { return w.stride; });
    t.add({.name = "limit", .help = "At most this many windows", .min = -1, .default_text = "-1 = all"},
          [](W& w) -> int64_t& { return w.limit; });
    t.add({.name = "label_horizon", .help = "Label each window by the return this many rows after it (0: no labels)",
           .min = 0},
          [](W& w) -> int64_t& { return w.label_horizon; });
    t.add({.name = "label_threshold",
           .help = "Dead zone of 3-class labels (0 down / 1 flat / 2 up); negative: 2 classes (1 up / 0 not up)"},
          [](W& w) -> double& { return w.label_threshold; });
    return t;
  }();
  return table;
}

}  // namespace kiln
