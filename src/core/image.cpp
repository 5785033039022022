#include "kiln/image.h"

namespace kiln {

ImageView image_view_packed(void* data, int32_t width, int32_t height, int32_t channels, PixelType type,
                            Layout layout) {
  ImageView v;
  v.data = data;
  v.width = width;
  v.height = height;
  v.channels = channels;
  v.type = type;
  v.layout = layout;
  v.row_stride = static_cast<int64_t>(v.pixel_size()) * width;
  v.plane_stride = layout == Layout::kCHW ? v.row_stride * height : 0;
  return v;
}

VarShapeBatch VarShapeBatch::allocate(const std::vector<ImageShape>& shapes) {
  constexpr size_t kAlign = 64;
  VarShapeBatch batch;
  std::vector<size_t> offsets;
  size_t total = 0;
  for (const ImageShape& s : shapes) {
    offsets.push_back(total);
    const size_t bytes = pixel_type_size(s.type) * static_cast<size_t>(s.channels) * static_cast<size_t>(s.width) *
                         static_cast<size_t>(s.height);
    total += (bytes + kAlign - 1) / kAlign * kAlign;
  }
  batch.m_storage.resize(total + kAlign);
  auto base = reinterpret_cast<uintptr_t>(batch.m_storage.data());
  const uintptr_t aligned = (base + kAlign - 1) / kAlign * kAlign;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const ImageShape& s = shapes[i];
    batch.m_images.push_back(image_view_packed(reinterpret_cast<void*>(aligned + offsets[i]), s.width, s.height,
                                               s.channels, s.type, s.layout));
  }
  return batch;
}

VarShapeBatch VarShapeBatch::wrap(std::vector<ImageView> images, MemorySpace space) {
  VarShapeBatch batch;
  batch.m_images = std::move(images);
  batch.m_space = space;
  return batch;
}

VarShapeBatch VarShapeBatch::wrap(const BatchView& batch) {
  std::vector<ImageView> images;
  images.reserve(static_cast<size_t>(batch.count));
  for (int64_t i = 0; i < batch.count; ++i) images.push_back(batch.image(i));
  return wrap(std::move(images));
}

void ImageBatch::resize(int64_t count, int32_t width, int32_t height, int32_t channels, PixelType type) {
  m_view.count = count;
  m_view.width = width;
  m_view.height = height;
  m_view.channels = channels;
  m_view.type = type;
  m_view.image_stride = static_cast<int64_t>(m_view.image_bytes());
  m_storage.resize(static_cast<size_t>(count) * m_view.image_bytes());
  m_view.data = m_storage.data();
}

}  // namespace kiln
