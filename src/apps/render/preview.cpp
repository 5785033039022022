#include "apps/render/preview.h"

#include <algorithm>
#include <cmath>
#include <string>

#if KILN_HAS_JPEG
#include "io/durable_file.h"
#include "io/png_codec.h"
#endif

namespace kiln {

Status preview_write_png(const std::string& path, const std::vector<ImageView>& images, int32_t columns) {
#if KILN_HAS_JPEG
  if (path.empty()) return invalid_argument("preview: no output path");
  if (images.empty()) return invalid_argument("preview: no images");
  int32_t cell_w = 0;
  int32_t cell_h = 0;
  for (const ImageView& image : images) {
    if (image.data == nullptr || image.width <= 0 || image.height <= 0) return invalid_argument("preview: empty image");
    if (image.channels != 1) return invalid_argument("preview: gray images only");
    const int64_t min_stride = static_cast<int64_t>(image.width) * static_cast<int64_t>(image.pixel_size());
    if (image.row_stride < min_stride) return invalid_argument("preview: row_stride too small");
    cell_w = std::max(cell_w, image.width);
    cell_h = std::max(cell_h, image.height);
  }
  const int64_t n = static_cast<int64_t>(images.size());
  if (columns <= 0) columns = static_cast<int32_t>(std::ceil(std::sqrt(static_cast<double>(n))));
  columns = static_cast<int32_t>(std::min<int64_t>(columns, n));
  const int64_t rows = (n + columns - 1) / columns;
  const int64_t width = columns * static_cast<int64_t>(cell_w) + (columns - 1) * kPreviewGutter;
  const int64_t height = rows * static_cast<int64_t>(cell_h) + (rows - 1) * kPreviewGutter;
  if (width > INT32_MAX || height > INT32_MAX || width * height > (int64_t{1} << 30))
    return invalid_argument("preview: grid too large (use fewer images or more columns)");

  std::vector<uint8_t> canvas(static_cast<size_t>(width * height), kPreviewGutterGray);
  for (int64_t i = 0; i < n; ++i) {
    const ImageView& image = images[static_cast<size_t>(i)];
    const int64_t x0 = (i % columns) * (cell_w + kPreviewGutter);
    const int64_t y0 = (i / columns) * (cell_h + kPreviewGutter);
    for (int32_t y = 0; y < image.height; ++y) {
      uint8_t* dst = canvas.data() + (y0 + y) * width + x0;
      if (image.type == PixelType::kU8) {
        std::copy_n(image.row<const uint8_t>(y), image.width, dst);
      } else {
        const float* src = image.row<const float>(y);
        for (int32_t x = 0; x < image.width; ++x) {
          const float v = src[x] * 255.0f;
          // NaN compares false on both sides and lands on 0.
          dst[x] = v >= 255.0f ? 255 : (v > 0.0f ? static_cast<uint8_t>(v + 0.5f) : 0);
        }
      }
    }
  }

  ImageView grid;
  grid.data = canvas.data();
  grid.width = static_cast<int32_t>(width);
  grid.height = static_cast<int32_t>(height);
  grid.channels = 1;
  grid.row_stride = width;
  grid.type = PixelType::kU8;
  std::vector<uint8_t> png;
  KILN_TRY(png_encode(grid, png, 6));
  return file_write_atomic(path, png.data(), png.size());
#else
  (void)path;
  (void)images;
  (void)columns;
  return unsupported_format("this kiln was built without libspng (KILN_JPEG=OFF): no PNG preview");
#endif
}

}  // namespace kiln
