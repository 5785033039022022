// _kiln.render (a batch of windows) and _kiln.render_windows (windows as views into one series).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <vector>

#include "array_input.h"
#include "bindings.h"
#include "errors.h"
#include "render_options.h"

namespace kiln::py {

namespace {

namespace pyb = pybind11;

// Allocates the (B, H, W) output, renders with the GIL released, raises on failure.
pyb::array render_to_array(const RenderOptions& options, const WindowBatch& windows) {
  const RenderParams& p = options.params;
  const std::vector<pyb::ssize_t> shape{windows.count, p.height, p.width};
  pyb::array out = p.dtype == PixelType::kF32 ? pyb::array(pyb::dtype::of<float>(), shape)
                                              : pyb::array(pyb::dtype::of<uint8_t>(), shape);
  if (windows.count == 0 || p.width <= 0 || p.height <= 0) {
    status_check(render_validate(p, windows));
    return out;
  }
  BatchView view;
  view.data = out.mutable_data();
  view.count = windows.count;
  view.width = p.width;
  view.height = p.height;
  view.channels = 1;
  view.type = p.dtype;
  view.image_stride = static_cast<int64_t>(view.image_bytes());
  Status status;
  {
    pyb::gil_scoped_release release;
    status = render_execute(options, windows, view);
  }
  status_check(status);
  return out;
}

pyb::array render(pyb::handle windows_obj, int32_t width, int32_t height, double line_width, const std::string& style,
                  const std::string& mode, int32_t threads, const std::string& dtype) {
  const RenderOptions options = render_options_make(width, height, line_width, style, mode, threads, dtype);
  const WindowsArray w = windows_from_object(windows_obj);
  // Window i starts at row i * seq_len of the (B * seq_len)-row series the array is.
  std::vector<int64_t> starts(static_cast<size_t>(w.count));
  for (int64_t i = 0; i < w.count; ++i) starts[static_cast<size_t>(i)] = i * w.seq_len;
  const WindowBatch batch{w.data(), w.channels, starts.data(), w.count, w.seq_len};
  return render_to_array(options, batch);
}

pyb::array render_windows(pyb::handle series_obj, pyb::handle starts_obj, int64_t seq_len, int32_t width,
                          int32_t height, double line_width, const std::string& style, const std::string& mode,
                          int32_t threads, const std::string& dtype) {
  const RenderOptions options = render_options_make(width, height, line_width, style, mode, threads, dtype);
  const SeriesArray s = series_from_object(series_obj);
  const StartArray starts = starts_from_object(starts_obj);
  if (seq_len < 2 || seq_len > s.rows) {
    raise_value_error("seq_len must be in [2, " + std::to_string(s.rows) + "] for this series, got " +
                      std::to_string(seq_len));
  }
  const int64_t* st = starts.data();
  const int64_t count = starts.shape(0);
  for (int64_t i = 0; i < count; ++i) {
    if (st[i] < 0 || st[i] + seq_len > s.rows) {
      raise_value_error("starts[" + std::to_string(i) + "] = " + std::to_string(st[i]) + ": window of " +
                        std::to_string(seq_len) + " rows runs outside the series of " + std::to_string(s.rows) +
                        " rows");
    }
  }
  const WindowBatch batch{s.data(), s.channels, st, count, static_cast<int32_t>(seq_len)};
  return render_to_array(options, batch);
}

}  // namespace

void render_bindings_add(pyb::module_& m) {
  using namespace pybind11::literals;
  m.def("render", &render, "windows"_a, "width"_a = 800, "height"_a = 500, "line_width"_a = 3.0, "style"_a = "line",
        "mode"_a = "auto", "threads"_a = 0, "dtype"_a = "uint8",
        R"doc(Render a batch of windows into chart images.

windows: float array (B, seq_len), or (B, seq_len, 4) Open/High/Low/Close ("ohlc" needs this form; "line" draws
Close). A C-contiguous float32 array is read in place (zero copy); other float dtypes or strides are converted to a
float32 copy first. Returns a (B, height, width) uint8 array (or float32 in [0, 1] with dtype="float32").
mode: "auto" (GPU if available, else CPU), "gpu" or "cpu". threads: CPU threads, 0 = all. The GIL is released
while rendering; GPU errors finish the batch on the CPU.)doc");
  m.def("render_windows", &render_windows, "series"_a, "starts"_a, "seq_len"_a, "width"_a = 800, "height"_a = 500,
        "line_width"_a = 3.0, "style"_a = "line", "mode"_a = "auto", "threads"_a = 0, "dtype"_a = "uint8",
        R"doc(Render windows that are views into one series: window i is rows [starts[i], starts[i] + seq_len).

series: float array (N,) or (N, 4) (C-contiguous float32 is zero copy); starts: 1-D integer array.
Returns (len(starts), height, width) images.)doc");
}

}  // namespace kiln::py
