// _kiln.window_plan (which windows a series offers) and _kiln.render_job (series -> dataset on disk).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "array_input.h"
#include "bindings.h"
#include "errors.h"
#include "apps/render/render_job.h"
#include "render_options.h"

namespace kiln::py {

namespace {

namespace pyb = pybind11;

// kiln's Series owns its values, so the array is copied once (windows stay views into that copy).
std::shared_ptr<Series> series_copy(const SeriesArray& s, const std::string& source, const std::string& column) {
  auto series = std::make_shared<Series>();
  series->values.assign(s.data(), s.data() + s.rows * s.channels);
  series->rows = s.rows;
  series->channels = s.channels;
  series->source = source;
  series->column = column;
  return series;
}

pyb::tuple window_plan_py(pyb::handle series_obj, int64_t seq_len, int64_t stride, int64_t limit,
                          int64_t label_horizon, std::optional<double> label_threshold, bool ohlc) {
  const SeriesArray s = series_from_object(series_obj);
  if (ohlc && s.channels != 4) raise_value_error("OHLC windows need a (N, 4) Open/High/Low/Close series");
  WindowSpec spec;
  spec.seq_len = seq_len;
  spec.stride = stride;
  spec.limit = limit;
  spec.label_horizon = label_horizon;
  spec.label_threshold = label_threshold.value_or(-1.0);
  spec.ohlc = ohlc;
  const std::shared_ptr<Series> series = series_copy(s, "<array>", "");
  Result<WindowPlan> plan = window_plan(*series, spec);
  status_check(plan.status());
  const WindowPlan& p = plan.value();
  pyb::array_t<int64_t> starts(static_cast<pyb::ssize_t>(p.starts.size()));
  std::copy(p.starts.begin(), p.starts.end(), starts.mutable_data());
  pyb::object labels = pyb::none();
  if (label_horizon > 0) {
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
  d["skipped"] = s.skipped_nonfinite;
  d["dropped_no_future"] = s.dropped_no_future;
  d["seconds"] = s.seconds;
  d["output_bytes"] = s.output_bytes;
  d["raw_bytes"] = s.raw_bytes;
  d["backend"] = s.backend;
  d["placement_reason"] = s.placement_reason;
  d["output"] = s.output;
  d["threads"] = s.threads;
  d["fallbacks"] = s.fallbacks;
  d["fallback_events"] = s.fallback_events;
  return d;
}

pyb::dict render_job_py(pyb::handle series_obj, const std::string& output, const std::string& format,
                        const std::string& compression, int64_t images_per_file, int64_t seq_len, int64_t stride,
                        int64_t limit, double line_width, int32_t width, int32_t height, int32_t dpi,
                        const std::string& style, const std::string& mode, int64_t batch_size, int32_t threads,
                        bool fallback_on_error, int64_t label_horizon, std::optional<double> label_threshold,
                        bool overwrite, bool resume, const std::string& column, const std::string& source,
                        const std::string& dtype, int32_t jpeg_quality) {
  const SeriesArray s = series_from_object(series_obj);
  RenderJobConfig c;
  c.series = series_copy(s, source, column);
  c.windows.seq_len = seq_len;
  c.windows.stride = stride;
  c.windows.limit = limit;
  c.windows.label_horizon = label_horizon;
  c.windows.label_threshold = label_threshold.value_or(-1.0);
  const RenderOptions options = render_options_make(width, height, line_width, style, mode, threads, dtype);
  c.render = options.params;
  c.mode = options.mode;
  c.windows.ohlc = c.render.style == ChartStyle::kOhlc;
  c.dpi = dpi;
  c.output.path = output;
  Result<OutputFormat> parsed_format = output_format_parse(format);
  status_check(parsed_format.status());
  c.output.format = parsed_format.value();
  Result<Compression> parsed_compression = compression_parse(compression);
  status_check(parsed_compression.status());
  c.output.compression = parsed_compression.value();
  c.output.images_per_file = images_per_file;
  c.output.jpeg_quality = jpeg_quality;
  c.output.overwrite = overwrite;
  c.output.resume = resume;
  c.batch_size = batch_size;
  c.threads = threads;
  c.fallback_on_error = fallback_on_error;

  Result<RenderJobSummary> summary = RenderJobSummary{};
  {
    pyb::gil_scoped_release release;
    summary = render_job_run(c);
  }
  status_check(summary.status());
  return summary_dict(summary.value());
}

}  // namespace

void dataset_bindings_add(pyb::module_& m) {
  using namespace pybind11::literals;
  m.def("window_plan", &window_plan_py, "series"_a, "seq_len"_a = 100, "stride"_a = 1, "limit"_a = -1,
        "label_horizon"_a = 0, "label_threshold"_a = pyb::none(), "ohlc"_a = false,
        R"doc(Plan sliding windows over a series (N,) or (N, 4).

Returns (starts: int64 array of start rows, labels: int8 array or None without label_horizon, skipped: windows
dropped for NaN/inf). label_threshold None: labels 1 = up, 0 = not up; >= 0: 0 down / 1 flat / 2 up.)doc");
  m.def("render_job", &render_job_py, "series"_a, "output"_a, "format"_a = "hdf5", "compression"_a = "zstd",
        "images_per_file"_a = 0, "seq_len"_a = 100, "stride"_a = 1, "limit"_a = -1, "line_width"_a = 3.0,
        "width"_a = 800, "height"_a = 500, "dpi"_a = 100, "style"_a = "line", "mode"_a = "auto",
        "batch_size"_a = 1024, "threads"_a = 0, "fallback_on_error"_a = true, "label_horizon"_a = 0,
        "label_threshold"_a = pyb::none(), "overwrite"_a = false, "resume"_a = false, "column"_a = "Close",
        "source"_a = "<array>", "dtype"_a = "uint8", "jpeg_quality"_a = 95,
        R"doc(Render every window of an in-memory series (N,) or (N, 4) to a dataset (hdf5, png, jpeg, npy), the
same pipeline as `kiln render`. The series is copied once; the GIL is released while the job runs.
Returns a summary dict (images, skipped, seconds, backend, output, fallbacks, ...).)doc");
}

}  // namespace kiln::py
