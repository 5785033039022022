#include "dlpack_arrays.h"

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "bindings.h"
#include "errors.h"

namespace kiln::py {

namespace {

namespace pyb = pybind11;

constexpr const char* kCapsule = "dltensor";
constexpr const char* kUsedCapsule = "used_dltensor";

struct DeviceArray {
  std::shared_ptr<DeviceArrayData> data;
};

[[noreturn]] void raise_device_error(const std::string& message) {
  status_check(Status(Errc::kDeviceError, message));
  throw std::logic_error("unreachable");
}

DLDataType dl_type(PixelType type) {
  if (type == PixelType::kU8) return {kDLUInt, 8, 1};
  return {kDLFloat, static_cast<uint8_t>(type == PixelType::kF16 ? 16 : 32), 1};
}

pyb::dtype numpy_type(PixelType type) {
  return type == PixelType::kU8 ? pyb::dtype::of<uint8_t>()
         : type == PixelType::kF16 ? pyb::dtype("float16") : pyb::dtype::of<float>();
}

size_t bytes_of(const DeviceArrayData& d) {
  size_t n = pixel_type_size(d.type);
  for (int64_t s : d.shape) n *= static_cast<size_t>(s);
  return n;
}

// The export's manager: keeps the memory alive as long as the consumer holds the tensor. `consumer`: the stream the
// consumer said it reads the tensor on (DLPack's `stream`); its reads must be done before the memory can go back to
// kiln's pool (where kiln's next call could write it while they are still queued). No stream: none to wait for.
struct Export {
  std::shared_ptr<DeviceArrayData> data;
  std::vector<int64_t> shape;
  std::optional<ForeignStream> consumer;
  DLManagedTensor tensor{};
};

// Called by the consumer, maybe without the GIL. Even where kiln's DeviceArray still holds the memory: it may be
// gone before the consumer's reads are done.
void export_release(DLManagedTensor* self) {
  auto* e = static_cast<Export*>(self->manager_ctx);
  if (e->consumer.has_value()) {
    Backend* backend = e->data->block.backend();
    backend->release_after_foreign_reads(*e->consumer, std::move(e->data));
  }
  delete e;
}

// DLPack's `stream` argument for CUDA: None is the legacy default stream (1), -1 asks for no synchronization.
std::optional<ForeignStream> consumer_stream_of(const DeviceArray& array, const pyb::kwargs& kwargs) {
  int64_t stream = 1;
  if (kwargs.contains("stream") && !kwargs["stream"].is_none()) stream = kwargs["stream"].cast<int64_t>();
  if (stream == 0) {
    PyErr_SetString(PyExc_BufferError, "__dlpack__: stream 0 is ambiguous for CUDA (DLPack): pass 1 or 2");
    throw pyb::error_already_set();
  }
  if (stream == -1) return std::nullopt;
  Result<ForeignStream> described =
      array.data->block.backend()->foreign_stream_describe(reinterpret_cast<void*>(static_cast<uintptr_t>(stream)));
  if (!described.is_ok()) {
    PyErr_SetString(PyExc_BufferError, ("__dlpack__: " + described.status().message()).c_str());
    throw pyb::error_already_set();
  }
  return described.value();
}

void capsule_destroy(PyObject* capsule) {
  // A capsule the consumer took was renamed "used_dltensor": its deleter is the consumer's to call.
  if (!PyCapsule_IsValid(capsule, kCapsule)) return;
  auto* tensor = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsule));
  if (tensor == nullptr) return;
  static_cast<Export*>(tensor->manager_ctx)->consumer.reset();  // never consumed: nothing read it
  if (tensor->deleter != nullptr) tensor->deleter(tensor);
}

// kiln's calls synchronize before they return, so the memory is ready on any stream the consumer names. Exported
// without a copy: `copy=True`, or a `dl_device` other than the array's, is refused (BufferError, as DLPack says).
pyb::capsule dlpack_export(const DeviceArray& array, const pyb::args&, const pyb::kwargs& kwargs) {
  const auto refuse = [](const std::string& why) {
    PyErr_SetString(PyExc_BufferError, ("kiln.DeviceArray.__dlpack__: " + why).c_str());
    throw pyb::error_already_set();
  };
  if (kwargs.contains("copy") && !kwargs["copy"].is_none() && kwargs["copy"].cast<bool>()) {
    refuse("copy=True: kiln exports its memory as it is (numpy() copies to the host)");
  }
  if (kwargs.contains("dl_device") && !kwargs["dl_device"].is_none()) {
    const auto wanted = kwargs["dl_device"].cast<std::pair<int, int>>();
    if (wanted != std::pair<int, int>{kDLCUDA, array.data->device}) {
      refuse("the array is on cuda:" + std::to_string(array.data->device) + ", DLPack device (" +
             std::to_string(wanted.first) + ", " + std::to_string(wanted.second) + ") was asked for");
    }
  }
  auto* e = new Export{array.data, array.data->shape, consumer_stream_of(array, kwargs), {}};
  DLTensor& t = e->tensor.dl_tensor;
  t.data = array.data->block.data();
  t.device = {kDLCUDA, array.data->device};
  t.ndim = static_cast<int32_t>(e->shape.size());
  t.dtype = dl_type(array.data->type);
  t.shape = e->shape.data();
  t.strides = nullptr;  // C-contiguous
  t.byte_offset = 0;
  e->tensor.manager_ctx = e;
  e->tensor.deleter = export_release;
  PyObject* capsule = PyCapsule_New(&e->tensor, kCapsule, capsule_destroy);
  if (capsule == nullptr) {
    delete e;
    throw pyb::error_already_set();
  }
  return pyb::reinterpret_steal<pyb::capsule>(capsule);
}

pyb::array device_array_numpy(const DeviceArray& array) {
  const DeviceArrayData& d = *array.data;
  pyb::array out(numpy_type(d.type), std::vector<pyb::ssize_t>(d.shape.begin(), d.shape.end()));
  Status st;
  {
    pyb::gil_scoped_release release;
    st = d.block.backend()->device_download(d.block.data(), out.mutable_data(), bytes_of(d));
  }
  status_check(st);
  return out;
}

pyb::object to_device(pyb::handle obj) {
  pyb::array any = pyb::array::ensure(obj);
  if (!any) raise_value_error("to_device: expected a numpy array (or anything numpy.asarray takes)");
  PixelType type;
  if (any.dtype().is(pyb::dtype::of<uint8_t>())) type = PixelType::kU8;
  else if (any.dtype().is(pyb::dtype::of<float>())) type = PixelType::kF32;
  else if (any.dtype().is(pyb::dtype("float16"))) type = PixelType::kF16;
  else raise_value_error("to_device: expected uint8, float16 or float32, got " + std::string(pyb::str(any.dtype())));
  const pyb::array packed = pyb::array::ensure(any, pyb::array::c_style);
  std::vector<int64_t> shape(packed.shape(), packed.shape() + packed.ndim());
  pyb::object made = device_array_make(shape, type);
  const std::shared_ptr<DeviceArrayData> d = device_array_data(made);
  Status st;
  {
    pyb::gil_scoped_release release;
    st = d->block.backend()->device_upload(packed.data(), d->block.data(), bytes_of(*d));
  }
  status_check(st);
  return made;
}

// The images of a DLPack tensor's `t`, or KilnValueError.
std::vector<ImageView> tensor_images(const DLTensor& t) {
  if (t.dtype.code != kDLUInt || t.dtype.bits != 8 || t.dtype.lanes != 1) {
    raise_value_error("images: a DLPack tensor of uint8 is expected (code " + std::to_string(t.dtype.code) +
                      ", " + std::to_string(t.dtype.bits) + " bits)");
  }
  if (t.ndim < 2 || t.ndim > 4) {
    raise_value_error("images: expected (H, W), (H, W, C) or (N, H, W, C), got " + std::to_string(t.ndim) +
                      " dimensions");
  }
  // Dimensions as (N, H, W, C) with their strides in elements (= bytes for uint8).
  int64_t shape[4] = {1, 1, 1, 1}, strides[4] = {0, 0, 0, 1};
  const int first = t.ndim == 2 ? 1 : 4 - t.ndim;
  const int dims = t.ndim == 2 ? 2 : t.ndim;
  for (int k = 0; k < dims; ++k) shape[first + k] = t.shape[k];
  int64_t compact = 1;
  for (int k = 3; k >= 0; --k) {
    const int from = k - first;
    const bool given = t.strides != nullptr && from >= 0 && from < dims;
    strides[k] = given && shape[k] > 1 ? t.strides[from] : compact;
    compact *= shape[k];
  }
  const int64_t channels = shape[3];
  if (channels < 1 || channels > 4) raise_value_error("images: expected 1 to 4 channels, got " + std::to_string(channels));
  if (strides[3] != 1 || strides[2] != channels || strides[1] < shape[2] * channels || strides[0] < 0 ||
      strides[1] < 0) {
    raise_value_error("images: a DLPack tensor's pixels must be packed (strides of W and C " +
                      std::to_string(strides[2]) + ", " + std::to_string(strides[3]) + "): make it contiguous");
  }
  auto* base = static_cast<uint8_t*>(t.data) + t.byte_offset;
  std::vector<ImageView> views;
  for (int64_t i = 0; i < shape[0]; ++i) {
    ImageView v = image_view_packed(base + i * strides[0], static_cast<int32_t>(shape[2]),
                                    static_cast<int32_t>(shape[1]), static_cast<int32_t>(channels), PixelType::kU8);
    v.row_stride = strides[1];
    views.push_back(v);
  }
  return views;
}

}  // namespace

bool dlpack_offered(pyb::handle obj) {
  return !pyb::isinstance<pyb::array>(obj) && PyObject_HasAttrString(obj.ptr(), "__dlpack__") &&
         PyObject_HasAttrString(obj.ptr(), "__dlpack_device__");
}

Backend& cuda_backend() {
  const BackendRegistry& registry = BackendRegistry::instance();
  if (Backend* cuda = registry.find(BackendKind::kCuda)) return *cuda;
  const BackendStatus* status = registry.status(BackendKind::kCuda);
  raise_device_error("device arrays need the CUDA backend: " + (status ? status->reason : std::string("not compiled")));
}

namespace {

// The tensor an object offers through DLPack: on the host, or on the CUDA backend's device with a kiln stream the
// producer ordered its pending writes before. `what` starts the error messages.
struct Imported {
  std::unique_ptr<Stream> stream;
  std::shared_ptr<DLManagedTensor> tensor;  // released before the stream (DlpackImages)
  MemorySpace space = MemorySpace::kHost;
  Backend* backend = nullptr;
};

Imported dlpack_import(pyb::handle obj, const std::string& what) {
  const auto where = obj.attr("__dlpack_device__")().cast<std::pair<int, int>>();
  Imported imported;
  pyb::object capsule;
  if (where.first == kDLCUDA) {
    imported.backend = &cuda_backend();
    const auto options = BackendRegistry::instance().options();
    status_check(options.status());
    if (where.second != options.value().device_id) {
      raise_device_error(what + ": the tensor is on cuda:" + std::to_string(where.second) +
                         ", kiln's CUDA backend on cuda:" + std::to_string(options.value().device_id) +
                         " (GPU_DEVICE_ID)");
    }
    auto stream = imported.backend->stream_create();
    status_check(stream.status());
    imported.stream = std::move(stream).value();
    // The producer orders its pending writes before this stream, which kiln's calls then run on.
    capsule =
        obj.attr("__dlpack__")(pyb::arg("stream") = reinterpret_cast<uintptr_t>(imported.stream->native_handle()));
    imported.space = MemorySpace::kDevice;
  } else if (where.first == kDLCPU || where.first == kDLCUDAHost) {
    capsule = obj.attr("__dlpack__")();
  } else {
    raise_value_error(what + ": DLPack device type " + std::to_string(where.first) + " is neither the host nor CUDA");
  }
  auto* tensor = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsule));
  if (tensor == nullptr) {
    PyErr_Clear();
    raise_value_error(what + ": __dlpack__ gave no 'dltensor' capsule");
  }
  PyCapsule_SetName(capsule.ptr(), kUsedCapsule);
  imported.tensor = std::shared_ptr<DLManagedTensor>(tensor, [](DLManagedTensor* t) {
    if (t->deleter != nullptr) t->deleter(t);
  });
  return imported;
}

}  // namespace

DlpackImages dlpack_images(pyb::handle obj) {
  Imported imported = dlpack_import(obj, "images");
  DlpackImages images;
  images.views = tensor_images(imported.tensor->dl_tensor);
  images.tensor = std::move(imported.tensor);
  images.space = imported.space;
  images.stream = std::move(imported.stream);
  images.backend = imported.backend;
  return images;
}

DlpackFloats dlpack_floats(pyb::handle obj, const std::string& what) {
  Imported imported = dlpack_import(obj, what);
  const DLTensor& t = imported.tensor->dl_tensor;
  if (t.dtype.code != kDLFloat || t.dtype.bits != 32 || t.dtype.lanes != 1) {
    raise_value_error(what + ": a DLPack tensor of float32 is expected (code " + std::to_string(t.dtype.code) +
                      ", " + std::to_string(t.dtype.bits) + " bits)");
  }
  DlpackFloats floats;
  floats.shape.assign(t.shape, t.shape + t.ndim);
  int64_t compact = 1;
  for (int k = t.ndim - 1; k >= 0; --k) {
    if (t.strides != nullptr && t.shape[k] > 1 && t.strides[k] != compact) {
      raise_value_error(what + ": a DLPack tensor must be C-contiguous: make it contiguous");
    }
    compact *= t.shape[k];
  }
  floats.data = reinterpret_cast<const float*>(static_cast<const uint8_t*>(t.data) + t.byte_offset);
  floats.values = static_cast<size_t>(compact);
  floats.tensor = std::move(imported.tensor);
  floats.space = imported.space;
  floats.stream = std::move(imported.stream);
  floats.backend = imported.backend;
  return floats;
}

pyb::object device_array_wrap(DeviceBlock block, std::vector<int64_t> shape, PixelType type) {
  const auto options = BackendRegistry::instance().options();
  status_check(options.status());
  auto data = std::make_shared<DeviceArrayData>();
  data->shape = std::move(shape);
  data->type = type;
  data->device = options.value().device_id;
  data->block = std::move(block);
  return pyb::cast(DeviceArray{std::move(data)});
}

pyb::object device_array_make(std::vector<int64_t> shape, PixelType type) {
  DeviceArrayData sized;
  sized.shape = shape;
  sized.type = type;
  auto block = DeviceBlock::acquire(cuda_backend(), std::max<size_t>(bytes_of(sized), 1));
  status_check(block.status());
  return device_array_wrap(std::move(block).value(), std::move(shape), type);
}

std::shared_ptr<DeviceArrayData> device_array_data(pyb::handle array) { return array.cast<const DeviceArray&>().data; }

void dlpack_bindings_add(pyb::module_& m) {
  using namespace pybind11::literals;
  pyb::class_<DeviceArray>(m, "DeviceArray",
                           "An array in the CUDA backend's memory (kiln.to_device, or what kiln returns for device\n"
                           "inputs). torch.from_dlpack(a) / cupy.from_dlpack(a) take it without a copy; numpy() copies\n"
                           "it to the host.")
      .def_property_readonly("shape", [](const DeviceArray& a) { return pyb::tuple(pyb::cast(a.data->shape)); })
      .def_property_readonly("dtype", [](const DeviceArray& a) { return numpy_type(a.data->type); })
      .def_property_readonly("device", [](const DeviceArray& a) { return "cuda:" + std::to_string(a.data->device); })
      .def("__len__", [](const DeviceArray& a) { return a.data->shape.empty() ? 0 : a.data->shape[0]; })
      .def("__dlpack__", &dlpack_export)
      .def("__dlpack_device__", [](const DeviceArray& a) { return pyb::make_tuple(int(kDLCUDA), a.data->device); })
      .def("numpy", &device_array_numpy, "A host copy (numpy.ndarray)")
      .def("__repr__", [](const DeviceArray& a) {
        std::string dims;
        for (int64_t s : a.data->shape) dims += (dims.empty() ? "" : ", ") + std::to_string(s);
        return "kiln.DeviceArray(shape=(" + dims + "), dtype=" + pixel_type_name(a.data->type) + ", device=cuda:" +
               std::to_string(a.data->device) + ")";
      });
  m.def("to_device", &to_device, "array"_a,
        "A copy of a uint8 / float16 / float32 array in the CUDA backend's memory (kiln.DeviceArray); KilnDeviceError\n"
        "where there is no CUDA device.");
}

}  // namespace kiln::py
