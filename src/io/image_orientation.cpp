#include "io/image_orientation.h"

#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

namespace kiln {

namespace {

// One output row: the source pixels lie on a line at a fixed step (a row or a column of the stored image).
template <int C>
void orient_row(const uint8_t* src, std::ptrdiff_t step, int32_t count, uint8_t* dst) {
  for (int32_t x = 0; x < count; ++x, src += step, dst += C) std::memcpy(dst, src, C);
}

}  // namespace

void image_orient(DecodedImage* image) {
  const int32_t o = image->orientation;
  image->orientation = 1;
  if (o < 2 || o > 8 || image->pixels.empty()) return;
  const int32_t w = image->width;
  const int32_t h = image->height;
  const int32_t c = image->channels;
  const bool swapped = o >= 5;
  const int32_t out_w = swapped ? h : w;
  const int32_t out_h = swapped ? w : h;
  PixelBytes out(image->pixels.size());
  const uint8_t* src = image->pixels.data();
  const auto offset = [&](int32_t x, int32_t y) {
    int32_t sx = 0;
    int32_t sy = 0;
    orientation_source(o, w, h, x, y, &sx, &sy);
    return (static_cast<std::ptrdiff_t>(sy) * w + sx) * c;
  };
  for (int32_t y = 0; y < out_h; ++y) {
    const std::ptrdiff_t first = offset(0, y);
    const std::ptrdiff_t step = out_w > 1 ? offset(1, y) - first : 0;
    uint8_t* dst = out.data() + static_cast<size_t>(y) * static_cast<size_t>(out_w) * static_cast<size_t>(c);
    switch (c) {
      case 1: orient_row<1>(src + first, step, out_w, dst); break;
      case 2: orient_row<2>(src + first, step, out_w, dst); break;
      case 3: orient_row<3>(src + first, step, out_w, dst); break;
      default: orient_row<4>(src + first, step, out_w, dst); break;
    }
  }
  image->pixels = std::move(out);
  image->width = out_w;
  image->height = out_h;
}

}  // namespace kiln
