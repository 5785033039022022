#include "apps/segment/mask_region.h"

#include <algorithm>

#include "ops/mask.h"

namespace kiln {

void mask_keep_largest_region(float* prob, int32_t width, int32_t height, float threshold, int32_t edge,
                              std::vector<uint8_t>* scratch) {
  const size_t n = static_cast<size_t>(width) * static_cast<size_t>(height);
  scratch->resize(3 * n);
  uint8_t* region = scratch->data();
  uint8_t* rows = region + n;
  uint8_t* grown = rows + n;
  for (size_t i = 0; i < n; ++i) region[i] = prob[i] >= threshold ? 255 : 0;
  ImageView view;
  view.data = region;
  view.width = width;
  view.height = height;
  view.channels = 1;
  view.row_stride = width;
  view.type = PixelType::kU8;
  mask_largest_component(view);
  // The region grown by `edge` pixels (a square window, in two separable passes): where its soft edge lies.
  for (int32_t y = 0; y < height; ++y) {
    const uint8_t* in = region + static_cast<size_t>(y) * width;
    uint8_t* out = rows + static_cast<size_t>(y) * width;
    for (int32_t x = 0; x < width; ++x) {
      uint8_t any = 0;
      for (int32_t k = std::max(0, x - edge); k <= std::min(width - 1, x + edge) && any == 0; ++k) any = in[k];
      out[x] = any;
    }
  }
  for (int32_t x = 0; x < width; ++x) {
    for (int32_t y = 0; y < height; ++y) {
      uint8_t any = 0;
      for (int32_t k = std::max(0, y - edge); k <= std::min(height - 1, y + edge) && any == 0; ++k) {
        any = rows[static_cast<size_t>(k) * width + x];
      }
      grown[static_cast<size_t>(y) * width + x] = any;
    }
  }
  // Kept: the region itself, and what lies below the threshold within its edge (never another region's pixels).
  for (size_t i = 0; i < n; ++i) {
    const bool kept = prob[i] >= threshold ? region[i] != 0 : grown[i] != 0;
    if (!kept) prob[i] = 0;
  }
}

}  // namespace kiln
