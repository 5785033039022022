// kiln.Model: an ONNX model (a packaged model's name or a file) on ONNX Runtime, called on numpy batches with the
// GIL released. device auto | gpu | cpu, like every other kiln call.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <mutex>

#include "bindings.h"
#include "errors.h"
#include "kiln/infer.h"

namespace kiln::py {

namespace pyb = pybind11;

namespace {

class PyModel {
 public:
  PyModel(const std::string& model, const std::string& device, int32_t threads) {
    auto path = model_path_resolve(model);
    status_check(path.status());
    InferOptions options;
    auto mode = exec_mode_parse(device);
    status_check(mode.status());
    options.mode = mode.value();
    options.threads = threads;
    Result<std::unique_ptr<InferSession>> session = Status(Errc::kInvalidArgument, "");
    {
      pyb::gil_scoped_release release;
      session = InferSession::open(path.value(), options);
    }
    status_check(session.status());
    m_session = std::move(session).value();
    m_name = model;
  }

  // A float32 batch (converted if needed) -> {output name: array}, in the model's order.
  pyb::dict call(const pyb::array& batch) {
    const auto input = pyb::array_t<float, pyb::array::c_style | pyb::array::forcecast>::ensure(batch);
    if (!input) raise_value_error("Model: expected a numeric array");
    std::vector<int64_t> shape(input.shape(), input.shape() + input.ndim());
    std::vector<Tensor> outputs;
    Status st;
    {
      pyb::gil_scoped_release release;
      st = m_session->run(std::span<const float>(input.data(), static_cast<size_t>(input.size())), shape, &outputs);
    }
    status_check(st);
    pyb::dict out;
    for (Tensor& t : outputs) {
      if (static_cast<int64_t>(t.data.size()) != t.elements()) raise_value_error("Model: output " + t.name + " is inconsistent");
      if (!t.exact.empty()) {  // integers as the model gave them
        const pyb::dtype dtype = t.type == TensorType::kUInt8   ? pyb::dtype::of<uint8_t>()
                                 : t.type == TensorType::kInt32 ? pyb::dtype::of<int32_t>()
                                                                : pyb::dtype::of<int64_t>();
        pyb::array array(dtype, t.shape);
        std::memcpy(array.mutable_data(), t.exact.data(), t.exact.size());
        out[pyb::str(t.name)] = array;
        continue;
      }
      pyb::array_t<float> array(t.shape);
      std::copy(t.data.begin(), t.data.end(), array.mutable_data());
      out[pyb::str(t.name)] = array;
    }
    return out;
  }

  pyb::list tensors(bool inputs) const {
    pyb::list out;
    for (const TensorInfo& t : inputs ? m_session->info().inputs : m_session->info().outputs) {
      pyb::list shape;
      for (size_t d = 0; d < t.shape.size(); ++d) {
        if (t.shape[d] >= 0) {
          shape.append(t.shape[d]);
        } else {
          shape.append(d < t.dim_names.size() && !t.dim_names[d].empty() ? pyb::object(pyb::str(t.dim_names[d]))
                                                                          : pyb::object(pyb::none()));
        }
      }
      pyb::dict entry;
      entry["name"] = t.name;
      entry["dtype"] = tensor_type_name(t.type);
      entry["shape"] = shape;
      out.append(entry);
    }
    return out;
  }

  pyb::dict report() const {
    const InferReport r = m_session->report();
    pyb::dict out;
    out["provider"] = r.provider;
    out["placement"] = r.placement;
    out["fallbacks"] = r.fallbacks;
    out["batch_dynamic"] = r.batch_dynamic;
    return out;
  }

  const std::string& name() const { return m_name; }

 private:
  std::unique_ptr<InferSession> m_session;
  std::string m_name;
};

}  // namespace

void infer_bindings_add(pyb::module_& m) {
  pyb::class_<PyModel>(m, "Model", R"doc(An ONNX model on ONNX Runtime.

Model(model, device="auto", threads=0): `model` is a packaged model's name (kiln.models()) or an .onnx file;
`device` auto | gpu | cpu places it on the CUDA/TensorRT providers or the CPU one (a GPU provider that fails falls
back to the CPU, see .report); `threads` are the CPU provider's intra-op threads (0 = all cores).
Calling it on a float32 batch (N, ...) returns {output name: array}; the GIL is released while it runs.)doc")
      .def(pyb::init<const std::string&, const std::string&, int32_t>(), pyb::arg("model"), pyb::arg("device") = "auto",
           pyb::arg("threads") = 0)
      .def("__call__", &PyModel::call, pyb::arg("batch"))
      .def_property_readonly("inputs", [](const PyModel& self) { return self.tensors(true); })
      .def_property_readonly("outputs", [](const PyModel& self) { return self.tensors(false); })
      .def_property_readonly("report", &PyModel::report)
      .def_property_readonly("name", &PyModel::name);
  m.def("models_dir", &model_dir, "The folder of kiln's packaged models");
}

}  // namespace kiln::py
