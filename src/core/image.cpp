#include "kiln/image.h"

#include <algorithm>
#include <cctype>

namespace kiln {

const char* pixel_type_name(PixelType type) {
  switch (type) {
    case PixelType::kU8: return "uint8";
    case PixelType::kF32: return "float32";
    case PixelType::kF16: return "float16";
  }
  return "?";
}

const char* layout_name(Layout layout) { return layout == Layout::kHWC ? "hwc" : "chw"; }

Result<PixelType> pixel_type_parse(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (n == "uint8" || n == "u8") return PixelType::kU8;
  if (n == "float32" || n == "f32") return PixelType::kF32;
  if (n == "float16" || n == "f16") return PixelType::kF16;
  return invalid_argument("unknown dtype '" + name + "' (uint8, float32 or float16)");
}

Result<Layout> layout_parse(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (n == "hwc") return Layout::kHWC;
  if (n == "chw") return Layout::kCHW;
  return invalid_argument("unknown layout '" + name + "' (chw or hwc)");
}

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
