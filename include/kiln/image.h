// Non-owning views of images and uniform image batches (host memory), plus an owning batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln {

enum class PixelType : uint8_t { kU8 = 0, kF32 };

inline size_t pixel_type_size(PixelType type) { return type == PixelType::kU8 ? 1 : 4; }
const char* pixel_type_name(PixelType type);

struct ImageView {
  void* data = nullptr;
  int32_t width = 0;
  int32_t height = 0;
  int32_t channels = 1;
  int64_t row_stride = 0;  // bytes between rows
  PixelType type = PixelType::kU8;

  size_t pixel_size() const { return pixel_type_size(type) * static_cast<size_t>(channels); }
  size_t packed_bytes() const { return pixel_size() * static_cast<size_t>(width) * static_cast<size_t>(height); }
  bool is_packed() const { return row_stride == static_cast<int64_t>(pixel_size()) * width; }
  template <typename T>
  T* row(int32_t y) const {
    return reinterpret_cast<T*>(static_cast<uint8_t*>(data) + static_cast<int64_t>(y) * row_stride);
  }
};

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
