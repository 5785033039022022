#include "array_input.h"

#include <string>

#include "errors.h"

namespace kiln::py {

namespace {

std::string shape_string(const pybind11::array& a) {
  std::string s = "(";
  for (pybind11::ssize_t i = 0; i < a.ndim(); ++i) {
    if (i) s += ", ";
    s += std::to_string(a.shape(i));
  }
  return s + (a.ndim() == 1 ? ",)" : ")");
}

std::string dtype_string(const pybind11::array& a) { return pybind11::str(a.dtype()).cast<std::string>(); }

// Any array-like as an ndarray, without copying an ndarray.
pybind11::array as_ndarray(pybind11::handle obj, const char* what) {
  pybind11::array a = pybind11::array::ensure(obj);
  if (!a) {
    raise_value_error(std::string(what) + " must be a numpy array (or array-like) of floats");
  }
  return a;
}

void require_float(const pybind11::array& a, const char* what) {
  if (a.dtype().kind() != 'f') {
    raise_value_error(std::string(what) + " must have a floating-point dtype (float32 is used without copying), got " +
                      dtype_string(a));
  }
}

FloatArray as_float32(const pybind11::array& a) {
  FloatArray f = FloatArray::ensure(a);  // the same object when already C-contiguous float32
  if (!f) throw pybind11::error_already_set();
  return f;
}

}  // namespace

WindowsArray windows_from_object(pybind11::handle obj) {
  pybind11::array a = as_ndarray(obj, "windows");
  require_float(a, "windows");
  if (a.ndim() != 2 && !(a.ndim() == 3 && a.shape(2) == 4)) {
    raise_value_error("windows must have shape (B, seq_len) or (B, seq_len, 4), got " + shape_string(a));
  }
  if (a.shape(1) > INT32_MAX) raise_value_error("windows: seq_len is too large");
  WindowsArray w;
  w.count = a.shape(0);
  w.seq_len = static_cast<int32_t>(a.shape(1));
  w.channels = a.ndim() == 3 ? 4 : 1;
  w.array = as_float32(a);
  return w;
}

SeriesArray series_from_object(pybind11::handle obj, const char* what) {
  pybind11::array a = as_ndarray(obj, what);
  require_float(a, what);
  if (a.ndim() != 1 && !(a.ndim() == 2 && (a.shape(1) == 4 || a.shape(1) == 1))) {
    raise_value_error(std::string(what) + " must have shape (N,) or (N, 4), got " + shape_string(a));
  }
  SeriesArray s;
  s.rows = a.shape(0);
  s.channels = a.ndim() == 2 ? static_cast<int32_t>(a.shape(1)) : 1;
  s.array = as_float32(a);
  return s;
}

StartArray starts_from_object(pybind11::handle obj) {
  pybind11::array a = as_ndarray(obj, "starts");
  const char kind = a.dtype().kind();
  if (a.ndim() != 1 || (kind != 'i' && kind != 'u')) {
    raise_value_error("starts must be a 1-D integer array, got " + dtype_string(a) + " " + shape_string(a));
  }
  StartArray s = StartArray::ensure(a);
  if (!s) throw pybind11::error_already_set();
  return s;
}

}  // namespace kiln::py
