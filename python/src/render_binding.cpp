// The render application from Python: _kiln.render (a batch of windows), _kiln.render_windows (windows as views
// into one series), _kiln.window_plan and _kiln.render_job (series -> dataset, the `kiln render` job).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "array_input.h"
#include "bindings.h"
#include "core/thread_pool.h"
#include "errors.h"
#include "kiln/apps/render.h"
#include "kiln/image_ops.h"
#include "py_jobs.h"

namespace kiln::py {

namespace {

namespace pyb = pybind11;

// Renders into a new (B, H, W) array ((B, H, W, 3) with color) with the GIL released; raises on failure. A GPU error finishes the batch on
// the CPU.
pyb::array render_to_array(const RenderCallSettings& s, const WindowBatch& windows) {
  const RenderParams& p = s.render;
  status_check(render_validate(p, windows));
  const int32_t channels = render_image_channels(p);
  std::vector<pyb::ssize_t> shape{windows.count, p.height, p.width};
  if (channels > 1) shape.push_back(channels);
  pyb::array out = p.dtype == PixelType::kF32 ? pyb::array(pyb::dtype::of<float>(), shape)
                                              : pyb::array(pyb::dtype::of<uint8_t>(), shape);
  if (windows.count == 0) return out;
  const BatchView view{out.mutable_data(), windows.count, p.width, p.height, channels, p.dtype,
                       static_cast<int64_t>(pixel_type_size(p.dtype)) * p.width * p.height * channels};
  Status status;
  {
    pyb::gil_scoped_release release;
    const RenderCall call(p, windows, view);
    ExecOptions exec = exec_options_make(s.exec, nullptr);
    auto placement = placement_choose(BackendRegistry::instance(), exec.mode, call.call(), exec.gpu_only);
    // A pool per call: cheap next to rendering, and safe in forked DataLoader workers (no threads inherited).
    std::optional<ThreadPool> pool;
    if (placement.is_ok() && !placement->backend->is_gpu() && windows.count > 1 && s.exec.threads != 1) {
      pool.emplace(s.exec.threads);
      exec.pool = &*pool;
    }
    status = placement.is_ok() ? op_run(call.call(), exec) : placement.status();
  }
  status_check(status);
  return out;
}

RenderCallSettings render_settings(const pyb::kwargs& kwargs, const char* function) {
  RenderCallSettings s;
  settings_apply(render_call_params(), &s, &s.exec, OpKind::kRender, kwargs, function);
  return s;
}

// An encoding (gasf, gadf, mtf, rp) without width or height is the window's seq_len x seq_len field.
void encoding_size_default(RenderCallSettings& s, const pyb::kwargs& kwargs, int64_t seq_len) {
  if (!chart_style_is_encoding(s.render.style)) return;
  if (!kwargs.contains("width")) s.render.width = static_cast<int32_t>(seq_len);
  if (!kwargs.contains("height")) s.render.height = static_cast<int32_t>(seq_len);
}

// (B, seq_len, P + layers) windows, P = 1 or 4 prices, then the volume and moving averages.
WindowsArray layered_windows_from_object(pyb::handle obj, int32_t layers) {
  if (layers == 0) return windows_from_object(obj);
  pyb::array a = pyb::array::ensure(obj);
  if (!a || a.ndim() != 3 || (a.shape(2) != 1 + layers && a.shape(2) != 4 + layers) || a.dtype().kind() != 'f' ||
      a.shape(1) > INT32_MAX) {
    raise_value_error("windows with " + std::to_string(layers) +
                      " volume/moving-average channels must be a float array (B, seq_len, " +
                      std::to_string(1 + layers) + ") or (B, seq_len, " + std::to_string(4 + layers) + ")");
  }
  WindowsArray w;
  w.count = a.shape(0);
  w.seq_len = static_cast<int32_t>(a.shape(1));
  w.channels = static_cast<int32_t>(a.shape(2));
  w.array = FloatArray::ensure(a);
  if (!w.array) throw pyb::error_already_set();
  return w;
}

pyb::array render(pyb::handle windows_obj, const pyb::kwargs& kwargs) {
  RenderCallSettings s = render_settings(kwargs, "render");
  const WindowsArray w = layered_windows_from_object(windows_obj, render_layer_channels(s.render));
  encoding_size_default(s, kwargs, w.seq_len);
  // Window i starts at row i * seq_len of the (B * seq_len)-row series the array is.
  std::vector<int64_t> starts(static_cast<size_t>(w.count));
  for (int64_t i = 0; i < w.count; ++i) starts[static_cast<size_t>(i)] = i * w.seq_len;
  return render_to_array(s, WindowBatch{w.data(), w.channels, starts.data(), w.count, w.seq_len});
}

// A series whose rows hold 1 or 4 prices and then `layers` more values (volume, moving averages): (N, P + layers).
SeriesArray layered_from_object(pyb::handle obj, int32_t layers) {
  if (layers == 0) return series_from_object(obj);
  pyb::array a = pyb::array::ensure(obj);
  if (!a || a.ndim() != 2 || (a.shape(1) != 1 + layers && a.shape(1) != 4 + layers) || a.dtype().kind() != 'f') {
    raise_value_error("a series with " + std::to_string(layers) +
                      " volume/moving-average columns must be a float array (N, " + std::to_string(1 + layers) +
                      ") or (N, " + std::to_string(4 + layers) + ")");
  }
  SeriesArray s;
  s.rows = a.shape(0);
  s.channels = static_cast<int32_t>(a.shape(1));
  s.array = FloatArray::ensure(a);
  if (!s.array) throw pyb::error_already_set();
  return s;
}

pyb::array render_windows(pyb::handle series_obj, pyb::handle starts_obj, int64_t seq_len, const pyb::kwargs& kwargs) {
  RenderCallSettings s = render_settings(kwargs, "render_windows");
  const SeriesArray series = layered_from_object(series_obj, render_layer_channels(s.render));
  const StartArray starts = starts_from_object(starts_obj);
  if (seq_len < 2 || seq_len > series.rows) {
    raise_value_error("seq_len must be in [2, " + std::to_string(series.rows) + "] for this series, got " +
                      std::to_string(seq_len));
  }
  encoding_size_default(s, kwargs, seq_len);
  const int64_t* st = starts.data();
  const int64_t count = starts.shape(0);
  for (int64_t i = 0; i < count; ++i) {
    if (st[i] < 0 || st[i] + seq_len > series.rows) {
      raise_value_error("starts[" + std::to_string(i) + "] = " + std::to_string(st[i]) + ": window of " +
                        std::to_string(seq_len) + " rows runs outside the series of " + std::to_string(series.rows) +
                        " rows");
    }
  }
  return render_to_array(s, WindowBatch{series.data(), series.channels, st, count, static_cast<int32_t>(seq_len)});
}

// kiln's Series owns its values, so the array is copied once (windows stay views into that copy).
std::shared_ptr<Series> series_copy(const SeriesArray& s, const std::string& source, const std::string& column,
                                    int32_t layers = 0) {
  auto series = std::make_shared<Series>();
  series->values.assign(s.data(), s.data() + s.rows * s.channels);
  series->rows = s.rows;
  series->channels = s.channels;
  series->layers = layers;
  series->source = source;
  series->column = column;
  return series;
}

// A panel's row ranges (symbol k: rows [symbol_rows[k], symbol_rows[k + 1])) onto `series`, checked by window_plan.
void panel_rows_set(Series* series, pyb::handle symbol_rows_obj) {
  if (symbol_rows_obj.is_none()) return;
  const StartArray rows = starts_from_object(symbol_rows_obj);
  if (rows.shape(0) < 2) raise_value_error("symbol_rows needs at least 2 entries (first rows and the end)");
  series->symbol_rows.assign(rows.data(), rows.data() + rows.shape(0));
  series->symbols.resize(series->symbol_rows.size() - 1);
  for (size_t k = 0; k < series->symbols.size(); ++k) series->symbols[k] = std::to_string(k);
  if (series->symbol_rows.front() != 0 || series->symbol_rows.back() != series->rows ||
      !std::is_sorted(series->symbol_rows.begin(), series->symbol_rows.end())) {
    raise_value_error("symbol_rows must rise from 0 to the series' " + std::to_string(series->rows) + " rows");
  }
}

pyb::tuple window_plan_py(pyb::handle series_obj, bool ohlc, int32_t layers, bool skip_constant,
                          pyb::handle symbol_rows_obj, const pyb::kwargs& kwargs) {
  WindowSpec spec;
  settings_apply(window_params(), &spec, nullptr, OpKind::kRender, kwargs, "window_plan");
  spec.ohlc = ohlc;
  spec.skip_constant = skip_constant;
  if (layers < 0) raise_value_error("layers must be >= 0");
  const SeriesArray s = layered_from_object(series_obj, layers);
  if (ohlc && s.channels - layers != 4) raise_value_error("OHLC windows need a (N, 4) Open/High/Low/Close series");
  const std::shared_ptr<Series> series = series_copy(s, "<array>", "", layers);
  panel_rows_set(series.get(), symbol_rows_obj);
  Result<WindowPlan> plan = window_plan(*series, spec);
  status_check(plan.status());
  const WindowPlan& p = plan.value();
  pyb::array_t<int64_t> starts(static_cast<pyb::ssize_t>(p.starts.size()));
  std::copy(p.starts.begin(), p.starts.end(), starts.mutable_data());
  pyb::object labels = pyb::none();
  if (spec.label_horizon > 0) {
    pyb::array_t<int8_t> l(static_cast<pyb::ssize_t>(p.labels.size()));
    std::copy(p.labels.begin(), p.labels.end(), l.mutable_data());
    labels = l;
  }
  return pyb::make_tuple(starts, labels, p.skipped_nonfinite);
}

pyb::dict summary_dict(const RenderJobSummary& s) {
  pyb::dict d;
  d["images"] = s.images;
  d["rendered"] = s.rendered;
  d["resumed_from"] = s.resumed_from;
  d["resume_notes"] = s.resume_notes;
  d["skipped"] = s.skipped_nonfinite;
  d["dropped_no_future"] = s.dropped_no_future;
  d["symbols"] = s.symbols;
  d["missing_days"] = s.missing_days;
  d["absent_days"] = s.absent_days;
  d["filled_days"] = s.filled_days;
  d["seconds"] = s.seconds;
  d["output_bytes"] = s.output_bytes;
  d["raw_bytes"] = s.raw_bytes;
  d["backend"] = s.backend;
  d["placement_reason"] = s.placement_reason;
  d["output"] = s.output;
  d["shard"] = s.shard;
  d["threads"] = s.threads;
  d["fallbacks"] = s.fallbacks;
  d["fallback_events"] = s.fallback_events;
  return d;
}

// series: an array (N,) or (N, 4), a path (CSV, NPY, Parquet, file.h5:/dataset), or None with demo=True.
pyb::dict render_job_py(pyb::handle series_obj, std::optional<std::string> config_path, const std::string& source,
                        const pyb::kwargs& kwargs) {
  RenderJobConfig config;
  if (config_path) status_check(render_config_apply_yaml(*config_path, &config, nullptr));
  settings_apply(render_job_params(), &config, &config.exec, OpKind::kRender, kwargs, "render_job");
  if (pyb::isinstance<pyb::str>(series_obj) || PyObject_HasAttrString(series_obj.ptr(), "__fspath__")) {
    config.input.path = pyb::str(series_obj).cast<std::string>();
  } else if (!series_obj.is_none()) {
    // With a volume panel the array's last column is the volume: (N, 2) or (N, 5).
    const int32_t layers = config.render.volume || config.preset != RenderPreset::kNone ? 1 : 0;
    config.series = series_copy(layered_from_object(series_obj, layers), source, config.input.column, layers);
  }
  Result<RenderJobSummary> summary = RenderJobSummary{};
  {
    pyb::gil_scoped_release release;
    summary = render_job_run(config);
  }
  status_check(summary.status());
  return summary_dict(summary.value());
}

// prices (N,) or (N, 4), then the volume (N,) if given, then a moving average of the line prices per window length:
// the series a chart with those layers renders (the same averages as the render job's).
pyb::array chart_series(pyb::handle prices_obj, pyb::handle volume_obj, const std::vector<int32_t>& moving_averages,
                        pyb::handle symbol_rows_obj, const std::string& missing_days, pyb::handle counts_obj) {
  const SeriesArray prices = series_from_object(prices_obj, "prices");
  Series series;
  series.rows = prices.rows;
  series.channels = prices.channels;
  if (!volume_obj.is_none()) {
    const SeriesArray volume = series_from_object(volume_obj, "volume");
    if (volume.channels != 1 || volume.rows != prices.rows) raise_value_error("volume must be (N,) like the prices");
    series.channels += 1;
    series.layers = 1;
    series.values.resize(static_cast<size_t>(series.rows) * series.channels);
    for (int64_t i = 0; i < series.rows; ++i) {
      std::copy(prices.data() + i * prices.channels, prices.data() + (i + 1) * prices.channels,
                series.values.data() + i * series.channels);
      series.values[static_cast<size_t>(i * series.channels + prices.channels)] = volume.data()[i];
    }
  } else {
    series.values.assign(prices.data(), prices.data() + prices.rows * prices.channels);
  }
  panel_rows_set(&series, symbol_rows_obj);
  const Result<MissingDays> policy = enum_parse(kMissingDaysNames, missing_days, "missing_days");
  status_check(policy.status());
  const MissingDaysCount count = series_missing_days_apply(series, policy.value(), &series);
  if (!counts_obj.is_none()) {
    pyb::dict counts = counts_obj.cast<pyb::dict>();
    counts["missing_days"] = count.missing;
    counts["filled_days"] = count.filled;
  }
  Result<Series> layered = series_with_moving_averages(series, moving_averages);
  status_check(layered.status());
  const Series& out = layered.value();
  pyb::array_t<float> result({static_cast<pyb::ssize_t>(out.rows), static_cast<pyb::ssize_t>(out.channels)});
  std::copy(out.values.begin(), out.values.end(), result.mutable_data());
  return result;
}

}  // namespace

void render_bindings_add(pyb::module_& m) {
  using namespace pybind11::literals;
  m.def("render", &render, "windows"_a,
        R"doc(Render a batch of windows into chart images.

windows: float array (B, seq_len), or (B, seq_len, 4) Open/High/Low/Close ("ohlc" needs this form; "line" and
the encodings "gasf", "gadf", "mtf" (mtf_bins), "rp" (rp_threshold) read Close; an encoding is seq_len x seq_len
unless width/height are given); with volume=True and/or moving_averages=K, each day's prices are followed by its volume and then its K
moving-average values (B, seq_len, 1 or 4 + layers). A C-contiguous float32 array is read in place (zero copy); other float dtypes or strides are converted to a
float32 copy first. Returns a (B, height, width) uint8 array (or float32 in [0, 1] with dtype="float32"), or
(B, height, width, 3) RGB with color=True (colours: color_background, color_line, color_up, color_down,
color_volume_up, color_volume_down as "#rrggbb", color_averages a comma list). The GIL is released while rendering;
GPU errors finish the batch on the CPU.)doc");
  m.def("render_windows", &render_windows, "series"_a, "starts"_a, "seq_len"_a,
        R"doc(Render windows that are views into one series: window i is rows [starts[i], starts[i] + seq_len).

series: float array (N,) or (N, 4) (C-contiguous float32 is zero copy); starts: 1-D integer array.
Returns (len(starts), height, width) images, or (len(starts), height, width, 3) with color=True.)doc");
  m.def("chart_series", &chart_series, "prices"_a, "volume"_a = pyb::none(),
        "moving_averages"_a = std::vector<int32_t>{}, "symbol_rows"_a = pyb::none(), "missing_days"_a = "skip",
        "counts"_a = pyb::none(),
        R"doc(The series a chart with a volume panel and moving averages renders: (N, P + 1 + len(moving_averages)).

prices: (N,) or (N, 4); volume: (N,) or None; moving_averages: window lengths. Row t of a moving average holds the
mean of the line prices of rows t-n+1..t (NaN before row n-1), so a window's first days average the rows before it.
Pass the result to window_plan(layers=...) and render_windows(volume=..., moving_averages=len(...)).
symbol_rows: a panel's row ranges (symbol k: rows symbol_rows[k]..symbol_rows[k+1]-1), each averaged on its own.
missing_days: "skip" or "fill" (a day with a NaN price or volume becomes a flat bar at the symbol's last close
with zero volume, as kiln render --missing-days fill); counts: a dict that receives missing_days and filled_days.)doc");
  m.def("window_plan", &window_plan_py, "series"_a, "ohlc"_a = false, "layers"_a = 0, "skip_constant"_a = false,
        "symbol_rows"_a = pyb::none(),
        R"doc(Plan sliding windows over a series (N,) or (N, 4), or (N, P + layers) with volume/moving averages.

Returns (starts: int64 array of start rows, labels: int8 array or None without label_horizon, skipped: windows
dropped for NaN/inf, and with skip_constant those whose line values are all equal, as the encodings skip them).
ohlc: windows need all four channels finite. symbol_rows: a panel's row ranges; no window crosses one.)doc");
  m.def("render_job", &render_job_py, "series"_a = pyb::none(), "config"_a = pyb::none(), "source"_a = "<array>",
        R"doc(Render every window of a series to a dataset (hdf5, png, jpeg, npy): the `kiln render` job.

series: an array (N,) or (N, 4) (copied once), a path (CSV, NPY, Parquet, file.h5:/dataset; a table with a symbol
column (a CSV, a Parquet file, an HDF5 compound dataset or group of columns) or a folder of CSV files is a panel:
symbol_column, market_cap_column), or None with demo=True.
config: a config.yaml applied before the environment and the keywords. source: the name stored for an array.
The GIL is released while the job runs. Returns a summary dict (images, skipped, seconds, backend, output,
fallbacks, ...).)doc");
}

}  // namespace kiln::py
