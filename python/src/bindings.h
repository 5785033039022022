// Registration functions of the _kiln extension, one per binding file.
#pragma once

#include <pybind11/pybind11.h>

namespace kiln::py {

void render_bindings_add(pybind11::module_& m);     // render, render_windows, window_plan, render_job
void devices_bindings_add(pybind11::module_& m);    // devices
void image_ops_bindings_add(pybind11::module_& m);  // quality, preprocess
void dlpack_bindings_add(pybind11::module_& m);     // DeviceArray, to_device
void infer_bindings_add(pybind11::module_& m);      // Model (when built with ONNX Runtime)
void faces_bindings_add(pybind11::module_& m);      // FaceService, ... (when built with ONNX Runtime and faiss)
void faces_job_bindings_add(pybind11::module_& m);  // faces_job (likewise)
void segment_bindings_add(pybind11::module_& m);    // SegmentPipeline (when built with ONNX Runtime and FFmpeg)
void merge_bindings_add(pybind11::module_& m);      // merge
void serve_bindings_add(pybind11::module_& m);      // serve_start (when built with kiln serve)
void precision_bindings_add(pybind11::module_& m);  // model_convert, model_quantize (with ONNX Runtime and libonnx)

}  // namespace kiln::py
