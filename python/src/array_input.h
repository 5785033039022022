// numpy inputs as kiln views. Only C-contiguous float32 arrays are used in place (zero copy); other floating
// dtypes or layouts are converted to a C-contiguous float32 copy. Non-float dtypes and wrong shapes raise
// KilnValueError. The returned structs keep the (possibly converted) array alive.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>

namespace kiln::py {

using FloatArray = pybind11::array_t<float, pybind11::array::c_style | pybind11::array::forcecast>;
using StartArray = pybind11::array_t<int64_t, pybind11::array::c_style | pybind11::array::forcecast>;

// A batch of windows: (B, seq_len) or (B, seq_len, 4), row-major, one window after the other.
struct WindowsArray {
  FloatArray array;
  int64_t count = 0;
  int32_t seq_len = 0;
  int32_t channels = 1;
  const float* data() const { return array.data(); }
};

// A series: (N,) or (N, 4) rows.
struct SeriesArray {
  FloatArray array;
  int64_t rows = 0;
  int32_t channels = 1;
  const float* data() const { return array.data(); }
};

WindowsArray windows_from_object(pybind11::handle obj);
SeriesArray series_from_object(pybind11::handle obj, const char* what = "series");
// Window start rows (1-D integer array).
StartArray starts_from_object(pybind11::handle obj);

}  // namespace kiln::py
