// The _kiln extension module: errors first (the bindings raise them), then the functions.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "errors.h"
#include "io/hdf5_library.h"
#include "params_py.h"
#include "kiln/version.h"

PYBIND11_MODULE(_kiln, m) {
  m.doc() = "kiln: chart images from price series and batched image ops (C++ core)";
  kiln::hdf5_exit_cleanup_disable();
  kiln::py::errors_register(m);
  kiln::py::render_bindings_add(m);
  kiln::py::devices_bindings_add(m);
  kiln::py::merge_bindings_add(m);
  kiln::py::image_ops_bindings_add(m);
  kiln::py::dlpack_bindings_add(m);
#if KILN_HAS_ORT
  kiln::py::infer_bindings_add(m);
#endif
#if KILN_HAS_ONNX
  kiln::py::precision_bindings_add(m);
#endif
#if KILN_HAS_FACES
  kiln::py::faces_bindings_add(m);
  kiln::py::faces_job_bindings_add(m);
#endif
#if KILN_HAS_SEGMENT
  kiln::py::segment_bindings_add(m);
#endif
#if KILN_HAS_SERVE
  kiln::py::serve_bindings_add(m);
#endif
  kiln::py::params_bindings_add(m);
  m.attr("version") = KILN_VERSION_STRING;
  m.attr("__version__") = KILN_VERSION_STRING;
}
