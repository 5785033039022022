// numpy images as a kiln var-shape batch: one (H, W), (H, W, C) array, an (N, H, W, C) stack, or a list of
// (H, W[, C]) arrays of different sizes. uint8 C-contiguous arrays are used in place; other layouts are copied
// once into C-contiguous uint8 (other dtypes raise KilnValueError).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <vector>

#include "kiln/image.h"

namespace kiln::py {

using U8Array = pybind11::array_t<uint8_t, pybind11::array::c_style>;

struct ImageListInput {
  std::vector<U8Array> arrays;  // keeps the pixels alive
  std::vector<ImageView> views;
  VarShapeBatchView batch() const {
    return VarShapeBatchView{views.data(), static_cast<int64_t>(views.size()), MemorySpace::kHost};
  }
};

ImageListInput images_from_object(pybind11::handle obj);

// A str or an os.PathLike: an image's path, not its bytes or pixels.
inline bool is_path(pybind11::handle obj) {
  return pybind11::isinstance<pybind11::str>(obj) || PyObject_HasAttrString(obj.ptr(), "__fspath__");
}

}  // namespace kiln::py
