// Images and batches: non-owning views of one image (HWC or CHW, u8/f16/f32, 1-4 channels), uniform batches,
// var-shape batches (images of different sizes, on the host or on a device) and owning host batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/enum_names.h"
#include "kiln/status.h"

namespace kiln {

// kF16 is IEEE binary16, stored as uint16_t bits.
enum class PixelType : uint8_t { kU8 = 0, kF32, kF16 };
// kHWC: interleaved channels, rows row_stride bytes apart. kCHW: one plane per channel, plane_stride bytes apart,
// rows row_stride bytes apart inside a plane.
enum class Layout : uint8_t { kHWC = 0, kCHW };
// Where a batch's pixel pointers point: host memory, or device memory of the backend the batch is passed to
// (CUDA device pointers; see docs/ops/README.md for which backends accept device batches).
enum class MemorySpace : uint8_t { kHost = 0, kDevice };

inline size_t pixel_type_size(PixelType type) {
  return type == PixelType::kU8 ? 1 : (type == PixelType::kF16 ? 2 : 4);
}
inline constexpr EnumName<PixelType> kPixelTypeNames[] = {
    {PixelType::kU8, "uint8"}, {PixelType::kF32, "float32"}, {PixelType::kF16, "float16"},
    {PixelType::kU8, "u8"},    {PixelType::kF32, "f32"},     {PixelType::kF16, "f16"}};
inline constexpr EnumName<Layout> kLayoutNames[] = {{Layout::kHWC, "hwc"}, {Layout::kCHW, "chw"}};
inline const char* pixel_type_name(PixelType type) { return enum_name(kPixelTypeNames, type); }
inline Result<PixelType> pixel_type_parse(const std::string& name) { return enum_parse(kPixelTypeNames, name, "dtype"); }
inline const char* layout_name(Layout layout) { return enum_name(kLayoutNames, layout); }
inline Result<Layout> layout_parse(const std::string& name) { return enum_parse(kLayoutNames, name, "layout"); }

struct ImageView {
  void* data = nullptr;
  int32_t width = 0;
  int32_t height = 0;
  int32_t channels = 1;
  int64_t row_stride = 0;  // bytes between rows
  PixelType type = PixelType::kU8;
  Layout layout = Layout::kHWC;
  int64_t plane_stride = 0;  // kCHW: bytes between channel planes

  // Bytes of one pixel of one row: all channels for HWC, one for CHW.
  size_t pixel_size() const {
    return pixel_type_size(type) * static_cast<size_t>(layout == Layout::kHWC ? channels : 1);
  }
  size_t packed_bytes() const {
    return pixel_type_size(type) * static_cast<size_t>(channels) * static_cast<size_t>(width) *
           static_cast<size_t>(height);
  }
  bool is_packed() const {
    const auto row_bytes = static_cast<int64_t>(pixel_size()) * width;
    return row_stride == row_bytes && (layout == Layout::kHWC || plane_stride == row_bytes * height);
  }
  template <typename T>
  T* row(int32_t y, int32_t plane = 0) const {
    return reinterpret_cast<T*>(static_cast<uint8_t*>(data) + static_cast<int64_t>(y) * row_stride +
                                static_cast<int64_t>(plane) * plane_stride);
  }
  // The sub-image [x, x + w) x [y, y + h) sharing this image's memory (the caller keeps it inside the image).
  ImageView crop(int32_t x, int32_t y, int32_t w, int32_t h) const {
    ImageView v = *this;
    v.data = static_cast<uint8_t*>(data) + static_cast<int64_t>(y) * row_stride +
             static_cast<int64_t>(x) * static_cast<int64_t>(pixel_size());
    v.width = w;
    v.height = h;
    return v;
  }
};

// A packed view of caller memory: rows and planes contiguous.
ImageView image_view_packed(void* data, int32_t width, int32_t height, int32_t channels, PixelType type,
                            Layout layout = Layout::kHWC);

// N images of identical shape, each packed rows, image_stride bytes apart.
struct BatchView {
  void* data = nullptr;
  int64_t count = 0;
  int32_t width = 0;
  int32_t height = 0;
  int32_t channels = 1;
  PixelType type = PixelType::kU8;
  int64_t image_stride = 0;  // bytes between images

  size_t image_bytes() const {
    return pixel_type_size(type) * static_cast<size_t>(channels) * static_cast<size_t>(width) *
           static_cast<size_t>(height);
  }
  ImageView image(int64_t i) const {
    ImageView v;
    v.data = static_cast<uint8_t*>(data) + i * image_stride;
    v.width = width;
    v.height = height;
    v.channels = channels;
    v.type = type;
    v.row_stride = static_cast<int64_t>(pixel_type_size(type)) * channels * width;
    return v;
  }
};

// A var-shape batch: `count` images that may differ in size (like CV-CUDA's ImageBatchVarShape), each with its
// own pointer and strides. Non-owning; the views array and the pixels outlive the call that receives it.
struct VarShapeBatchView {
  const ImageView* images = nullptr;
  int64_t count = 0;
  MemorySpace space = MemorySpace::kHost;

  const ImageView& operator[](int64_t i) const { return images[i]; }
  bool empty() const { return count == 0; }
};

// The shape of one image of a batch to allocate.
struct ImageShape {
  int32_t width = 0;
  int32_t height = 0;
  int32_t channels = 1;
  PixelType type = PixelType::kU8;
  Layout layout = Layout::kHWC;
};

// A var-shape batch on the host: either owning (allocate: one packed allocation, images 64-byte aligned) or
// wrapping caller views (zero copy). Cheap default state; reset() empties it.
class VarShapeBatch {
 public:
  VarShapeBatch() = default;
  static VarShapeBatch allocate(const std::vector<ImageShape>& shapes);
  static VarShapeBatch wrap(std::vector<ImageView> images, MemorySpace space = MemorySpace::kHost);
  // A view of each image of a uniform batch.
  static VarShapeBatch wrap(const BatchView& batch);

  VarShapeBatchView view() const { return VarShapeBatchView{m_images.data(), count(), m_space}; }
  int64_t count() const { return static_cast<int64_t>(m_images.size()); }
  const ImageView& operator[](int64_t i) const { return m_images[static_cast<size_t>(i)]; }
  const std::vector<ImageView>& images() const { return m_images; }
  void reset() { *this = VarShapeBatch(); }

 private:
  std::vector<ImageView> m_images;
  std::vector<uint8_t> m_storage;  // empty when wrapping caller memory
  MemorySpace m_space = MemorySpace::kHost;
};

// Owning, packed batch; cheap default state, reusable through resize().
class ImageBatch {
 public:
  ImageBatch() = default;
  void resize(int64_t count, int32_t width, int32_t height, int32_t channels, PixelType type);
  void reset() { *this = ImageBatch(); }
  BatchView view() { return m_view; }
  int64_t count() const { return m_view.count; }

 private:
  std::vector<uint8_t> m_storage;
  BatchView m_view;
};

}  // namespace kiln
