// kiln.Model: an ONNX model (a packaged model's name or a file) on ONNX Runtime, called on numpy batches or DLPack
// tensors (a torch CUDA tensor is read in place by the CUDA provider) with the GIL released. device auto | gpu | cpu,
// like every other kiln call.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <mutex>

#include "bindings.h"
#include "dlpack_arrays.h"
#include "errors.h"
#include "infer/device_tensor.h"
#include "infer/host_tensor.h"
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

  // A float32 batch (converted if needed; a DLPack tensor read in place) -> {output name: array}, in the model's
  // order.
  pyb::dict call(const pyb::object& batch) {
    if (dlpack_offered(batch)) return call_dlpack(batch);
    const auto input = pyb::array_t<float, pyb::array::c_style | pyb::array::forcecast>::ensure(batch);
    if (!input) raise_value_error("Model: expected a numeric array");
    std::vector<int64_t> shape(input.shape(), input.shape() + input.ndim());
    return run_host(std::span<const float>(input.data(), static_cast<size_t>(input.size())), shape);
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
    out["device_input_runs"] = r.device_input_runs;
    out["device_output_runs"] = r.device_output_runs;
    return out;
  }

  const std::string& name() const { return m_name; }

 private:
  pyb::dict run_host(std::span<const float> input, const std::vector<int64_t>& shape) {
    std::vector<Tensor> outputs;
    Status st;
    {
      pyb::gil_scoped_release release;
      st = m_session->run(input, shape, &outputs);
    }
    status_check(st);
    pyb::dict out;
    for (const Tensor& t : outputs) {
      if (static_cast<int64_t>(t.data.size()) != t.elements()) {
        raise_value_error("Model: output " + t.name + " is inconsistent");
      }
      out[pyb::str(t.name)] = output_array(t.type, t.shape, t.exact, t.data.data());
    }
    return out;
  }

  // A float32 DLPack tensor: host memory read in place; a CUDA tensor read in place by the CUDA provider (after the
  // stream its producer ordered its writes before), its outputs as kiln.DeviceArray: written in device memory by the
  // provider where the session binds them there (InferSession::run_to_device), else (the first batch of an input
  // size, which teaches the session their shapes; a run that failed there) bound to pinned host memory and copied up.
  // Integer outputs come back as numpy.
  pyb::dict call_dlpack(const pyb::object& batch) {
    const DlpackFloats in = dlpack_floats(batch, "Model");
    const std::span<const float> values(in.data, in.values);
    if (in.space == MemorySpace::kHost) return run_host(values, in.shape);
    Backend* const device = m_session->device_backend();
    if (device != in.backend) {
      status_check(Status(Errc::kDeviceError, "Model: a CUDA tensor is read in place by the CUDA provider; this "
                                              "model runs on " + m_session->report().provider +
                                              ": give it host memory (tensor.cpu())"));
    }
    std::vector<DeviceTensor> on_device;
    std::vector<HostTensor> outputs;
    Status st;
    {
      pyb::gil_scoped_release release;
      st = in.stream->synchronize();
      if (st.is_ok() && !m_session->run_to_device(values, device, in.shape, &on_device).is_ok()) {
        on_device.clear();
        st = m_session->run_bound_from_device(values, *device, in.shape, &outputs);
      }
    }
    status_check(st);
    pyb::dict out;
    for (DeviceTensor& t : on_device) {
      out[pyb::str(t.name)] = device_array_wrap(std::move(*t.memory), t.shape, PixelType::kF32);
    }
    for (const HostTensor& t : outputs) {
      if (t.type != TensorType::kFloat32) {
        out[pyb::str(t.name)] = output_array(t.type, t.shape, t.exact, t.data());
        continue;
      }
      pyb::object array = device_array_make(t.shape, PixelType::kF32);
      const std::shared_ptr<DeviceArrayData> d = device_array_data(array);
      {
        pyb::gil_scoped_release release;
        st = d->block.backend()->device_upload(t.data(), d->block.data(), t.values().size_bytes());
      }
      status_check(st);
      out[pyb::str(t.name)] = array;
    }
    return out;
  }

  // An output as numpy: integers as the model gave them (`exact`), else float32 from `values`.
  static pyb::array output_array(TensorType type, const std::vector<int64_t>& shape, const std::vector<uint8_t>& exact,
                                 const float* values) {
    if (!exact.empty()) {
      const pyb::dtype dtype = type == TensorType::kUInt8   ? pyb::dtype::of<uint8_t>()
                               : type == TensorType::kInt32 ? pyb::dtype::of<int32_t>()
                                                            : pyb::dtype::of<int64_t>();
      pyb::array array(dtype, shape);
      std::memcpy(array.mutable_data(), exact.data(), exact.size());
      return array;
    }
    pyb::array_t<float> array(shape);
    int64_t n = 1;
    for (const int64_t d : shape) n *= d;
    std::copy(values, values + n, array.mutable_data());
    return array;
  }

  std::unique_ptr<InferSession> m_session;
  std::string m_name;
};

}  // namespace

void infer_bindings_add(pyb::module_& m) {
  pyb::class_<PyModel>(m, "Model", R"doc(An ONNX model on ONNX Runtime.

Model(model, device="auto", threads=0): `model` is a packaged model's name (kiln.models()) or an .onnx file;
`device` auto | gpu | cpu places it on the CUDA/TensorRT providers or the CPU one (a GPU provider that fails falls
back to the CPU, see .report); `threads` are the CPU provider's intra-op threads (0 = all cores).
Calling it on a float32 batch (N, ...) returns {output name: array}; the GIL is released while it runs. A DLPack
tensor (torch, CuPy, kiln.DeviceArray) is read in place: on the host (outputs as numpy arrays), or a C-contiguous
CUDA tensor read by the CUDA provider on the device where it is, its float32 outputs as kiln.DeviceArray
(torch.from_dlpack takes them without a copy): written in device memory by the provider from the second batch of an
input size on (the first teaches the session their shapes and is copied up; report's device_output_runs counts the
others).)doc")
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
