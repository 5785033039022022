// DLPack between kiln and other array libraries: kiln.DeviceArray (images or tensors in the CUDA backend's memory,
// exported through __dlpack__, so torch.from_dlpack takes them without a copy) and the images of any object that
// offers __dlpack__ (a PyTorch or CuPy tensor, a kiln.DeviceArray), read in place on the host or on the device.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "core/backend_block.h"
#include "kiln/device.h"

struct DLManagedTensor;

namespace kiln::py {

// Device memory of the CUDA backend holding a C-contiguous array, shared by the Python object and every DLPack
// export of it.
struct DeviceArrayData {
  DeviceBlock block;
  std::vector<int64_t> shape;
  PixelType type = PixelType::kU8;
  int32_t device = 0;
};

// The images of a DLPack tensor: uint8 (H, W), (H, W, C) or (N, H, W, C) with C from 1 to 4, rows at any stride,
// pixels packed. Keeps the tensor alive (its producer's deleter runs when this goes).
struct DlpackImages {
  std::unique_ptr<Stream> stream;  // device tensors: the stream the producer made them ready on, for kiln's calls
  // Declared after the stream so that it is released first: a producer may wait for that stream when it is let go.
  std::shared_ptr<DLManagedTensor> tensor;
  std::vector<ImageView> views;
  MemorySpace space = MemorySpace::kHost;
  Backend* backend = nullptr;      // device tensors: the CUDA backend
  VarShapeBatchView batch() const { return {views.data(), static_cast<int64_t>(views.size()), space}; }
};

// A C-contiguous float32 DLPack tensor (kiln.Model's input), kept alive as DlpackImages keeps its tensor.
struct DlpackFloats {
  std::unique_ptr<Stream> stream;  // device tensors: synchronize it before another library reads them
  std::shared_ptr<DLManagedTensor> tensor;  // released before the stream, as DlpackImages'
  const float* data = nullptr;
  size_t values = 0;
  std::vector<int64_t> shape;
  MemorySpace space = MemorySpace::kHost;
  Backend* backend = nullptr;
};

// True for an object that is no numpy array but offers __dlpack__ and __dlpack_device__.
bool dlpack_offered(pybind11::handle obj);
// KilnValueError for another dtype or shape; KilnDeviceError for a device tensor without a CUDA backend or on
// another device than the backend's.
DlpackImages dlpack_images(pybind11::handle obj);
// The same for a float32 tensor; `what` starts the messages (KilnValueError for another dtype or strides).
DlpackFloats dlpack_floats(pybind11::handle obj, const std::string& what);
// The CUDA backend, or KilnDeviceError saying why there is none.
Backend& cuda_backend();
// A new kiln.DeviceArray of `shape` and `type` in the CUDA backend's memory (not initialized).
pybind11::object device_array_make(std::vector<int64_t> shape, PixelType type);
// A kiln.DeviceArray over `block` (memory of the CUDA backend holding a C-contiguous array of `shape` and `type`),
// which it takes over.
pybind11::object device_array_wrap(DeviceBlock block, std::vector<int64_t> shape, PixelType type);
// Where a kiln.DeviceArray made by device_array_make() keeps its memory.
std::shared_ptr<DeviceArrayData> device_array_data(pybind11::handle array);

}  // namespace kiln::py
