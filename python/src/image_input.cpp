#include "image_input.h"

#include <string>

#include "errors.h"

namespace kiln::py {

namespace {

namespace pyb = pybind11;

U8Array u8_array(pyb::handle obj, const std::string& what) {
  pyb::array any = pyb::array::ensure(obj);
  if (!any) raise_value_error(what + ": expected a numpy array");
  if (any.dtype().kind() != 'u' || any.dtype().itemsize() != 1) {
    raise_value_error(what + ": expected dtype uint8, got " + std::string(pyb::str(any.dtype())));
  }
  return U8Array::ensure(any);  // a C-contiguous copy only when the array is not already
}

ImageView view_of(const U8Array& a, int64_t index, const std::string& what) {
  const pyb::ssize_t ndim = a.ndim();
  const int64_t channels = ndim == 3 ? a.shape(2) : 1;
  if (ndim != 2 && ndim != 3) raise_value_error(what + ": expected (H, W) or (H, W, C), got " + std::to_string(ndim) + " dimensions");
  if (channels < 1 || channels > 4) raise_value_error(what + ": expected 1 to 4 channels, got " + std::to_string(channels));
  (void)index;
  return image_view_packed(const_cast<uint8_t*>(a.data()), static_cast<int32_t>(a.shape(1)),
                           static_cast<int32_t>(a.shape(0)), static_cast<int32_t>(channels), PixelType::kU8);
}

}  // namespace

ImageListInput images_from_object(pyb::handle obj) {
  ImageListInput input;
  if (pyb::isinstance<pyb::list>(obj) || pyb::isinstance<pyb::tuple>(obj)) {
    const pyb::sequence items = pyb::reinterpret_borrow<pyb::sequence>(obj);
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string what = "images[" + std::to_string(i) + "]";
      input.arrays.push_back(u8_array(items[i], what));
      input.views.push_back(view_of(input.arrays.back(), static_cast<int64_t>(i), what));
    }
    return input;
  }
  U8Array a = u8_array(obj, "images");
  if (a.ndim() == 4) {
    const int64_t count = a.shape(0);
    const int64_t image_bytes = a.shape(1) * a.shape(2) * a.shape(3);
    if (a.shape(3) < 1 || a.shape(3) > 4) raise_value_error("images: expected 1 to 4 channels, got " + std::to_string(a.shape(3)));
    for (int64_t i = 0; i < count; ++i) {
      input.views.push_back(image_view_packed(const_cast<uint8_t*>(a.data()) + i * image_bytes,
                                              static_cast<int32_t>(a.shape(2)), static_cast<int32_t>(a.shape(1)),
                                              static_cast<int32_t>(a.shape(3)), PixelType::kU8));
    }
  } else {
    input.views.push_back(view_of(a, 0, "images"));
  }
  input.arrays.push_back(std::move(a));
  return input;
}

}  // namespace kiln::py
