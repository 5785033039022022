#include "kiln/image.h"

namespace kiln {

const char* pixel_type_name(PixelType type) { return type == PixelType::kU8 ? "uint8" : "float32"; }

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
