// Host-side KilnImageDesc (ops/image_px.h) of an ImageView, for the shared per-pixel functions and GPU batches.
#pragma once

#include <cstdint>

#include "kiln/image.h"
#include "ops/image_px.h"

namespace kiln {

// The view's own strides; `offset` bytes from whatever base the caller pairs it with (0: base = v.data).
inline KilnImageDesc image_desc(const ImageView& v, int64_t offset = 0) {
  KilnImageDesc d{};
  d.offset = offset;
  d.width = v.width;
  d.height = v.height;
  d.channels = v.channels;
  d.row_stride = static_cast<int32_t>(v.row_stride);
  d.plane_stride = v.layout == Layout::kCHW ? v.plane_stride : 0;
  d.type = static_cast<int32_t>(v.type);
  d.layout = static_cast<int32_t>(v.layout);
  return d;
}

// The same image packed (rows, then planes, back to back) at `offset`.
inline KilnImageDesc image_desc_packed(const ImageView& v, int64_t offset) {
  return image_desc(image_view_packed(nullptr, v.width, v.height, v.channels, v.type, v.layout), offset);
}

}  // namespace kiln
