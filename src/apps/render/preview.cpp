#include "apps/render/preview.h"

#include <algorithm>
#include <cmath>
#include <string>

#if KILN_HAS_JPEG
#include "io/durable_file.h"
#include "io/png_codec.h"
#include "pictures/canvas.h"
#endif

namespace kiln {

std::vector<int64_t> preview_sample(int64_t total, int64_t count) {
  std::vector<int64_t> picked;
  if (total <= 0 || count <= 0) return picked;
  if (count >= total || count == 1) {
    for (int64_t i = 0; i < std::min(count, total); ++i) picked.push_back(i);
    return picked;
  }
  // Rounded to the nearest: k (total - 1) / (count - 1) for k = 0 .. count - 1; distinct, as total > count.
  for (int64_t k = 0; k < count; ++k) picked.push_back((k * (total - 1) * 2 + (count - 1)) / ((count - 1) * 2));
  return picked;
}

#if KILN_HAS_JPEG
namespace {

// The grid (gray or RGB) with `captions` written under its cells, as an RGB picture: the text size follows the cells'
// width (about 9 px from baseline to cap at 400 px), smaller where a caption would not fit, and a caption still too
// wide is shortened.
Status captioned_write(const std::string& path, const ImageView& grid, int64_t columns, int32_t cell_w,
                       int32_t cell_h, int32_t strip_h, double size, const std::vector<std::string>& captions) {
  Canvas canvas(grid.width, grid.height);
  canvas.image(grid, 0, 0, grid.width, grid.height);
  const auto pad = static_cast<int32_t>(std::lround(4 * size));
  for (size_t i = 0; i < captions.size(); ++i) {
    const auto x = static_cast<int32_t>((static_cast<int64_t>(i) % columns) * (cell_w + kPreviewGutter));
    const auto y = static_cast<int32_t>((static_cast<int64_t>(i) / columns) * (cell_h + strip_h + kPreviewGutter));
    const int32_t baseline = y + cell_h + static_cast<int32_t>(std::lround(14 * size));
    canvas.text(x + pad, baseline, Canvas::text_fitted(captions[i], cell_w - 2 * pad, size), ink::kText, size);
  }
  std::vector<uint8_t> png;
  KILN_TRY(png_encode(canvas.view(), png, 6));
  return file_write_atomic(path, png.data(), png.size());
}

}  // namespace
#endif

Status preview_write_png(const std::string& path, const std::vector<ImageView>& images, int32_t columns,
                         const std::vector<std::string>& captions) {
#if KILN_HAS_JPEG
  if (path.empty()) return invalid_argument("preview: no output path");
  if (images.empty()) return invalid_argument("preview: no images");
  if (!captions.empty() && captions.size() != images.size()) {
    return invalid_argument("preview: " + std::to_string(captions.size()) + " captions for " +
                            std::to_string(images.size()) + " images");
  }
  int32_t cell_w = 0;
  int32_t cell_h = 0;
  const int32_t channels = images.front().channels;  // 1 gray, 3 RGB (--color)
  for (const ImageView& image : images) {
    if (image.data == nullptr || image.width <= 0 || image.height <= 0) return invalid_argument("preview: empty image");
    if ((image.channels != 1 && image.channels != 3) || image.channels != channels) {
      return invalid_argument("preview: gray or RGB images, all alike");
    }
    const int64_t min_stride = static_cast<int64_t>(image.width) * static_cast<int64_t>(image.pixel_size());
    if (image.row_stride < min_stride) return invalid_argument("preview: row_stride too small");
    cell_w = std::max(cell_w, image.width);
    cell_h = std::max(cell_h, image.height);
  }
  const int64_t n = static_cast<int64_t>(images.size());
  if (columns <= 0) columns = static_cast<int32_t>(std::ceil(std::sqrt(static_cast<double>(n))));
  columns = static_cast<int32_t>(std::min<int64_t>(columns, n));
  double size = std::clamp(cell_w / 400.0, 0.7, 2.0);
  for (const std::string& caption : captions) {
    const int32_t room = cell_w - static_cast<int32_t>(std::lround(8 * size));
    const int32_t wide = Canvas::text_width(caption, size);
    if (wide > room) size = std::max(0.5, size * room / wide);
  }
  const int32_t strip_h = captions.empty() ? 0 : static_cast<int32_t>(std::lround(20 * size));
  const int64_t rows = (n + columns - 1) / columns;
  const int64_t width = columns * static_cast<int64_t>(cell_w) + (columns - 1) * kPreviewGutter;
  const int64_t height = rows * static_cast<int64_t>(cell_h + strip_h) + (rows - 1) * kPreviewGutter;
  if (width > INT32_MAX || height > INT32_MAX || width * height > (int64_t{1} << 30))
    return invalid_argument("preview: grid too large (use fewer images or more columns)");

  const int64_t row_bytes = width * channels;
  std::vector<uint8_t> canvas(static_cast<size_t>(row_bytes * height), kPreviewGutterGray);
  for (int64_t i = 0; i < n; ++i) {
    const ImageView& image = images[static_cast<size_t>(i)];
    const int64_t x0 = (i % columns) * (cell_w + kPreviewGutter);
    const int64_t y0 = (i / columns) * (cell_h + strip_h + kPreviewGutter);
    if (strip_h > 0) {  // the caption's strip, set apart from a chart's white
      for (int32_t y = 0; y < strip_h; ++y) {
        std::fill_n(canvas.data() + (y0 + cell_h + y) * row_bytes + x0 * channels, cell_w * channels,
                    kPreviewCaptionGray);
      }
    }
    for (int32_t y = 0; y < image.height; ++y) {
      uint8_t* dst = canvas.data() + (y0 + y) * row_bytes + x0 * channels;
      if (image.type == PixelType::kU8) {
        std::copy_n(image.row<const uint8_t>(y), image.width * channels, dst);
      } else {
        const float* src = image.row<const float>(y);
        for (int32_t x = 0; x < image.width * channels; ++x) {
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
  grid.channels = channels;
  grid.row_stride = row_bytes;
  grid.type = PixelType::kU8;
  if (!captions.empty()) return captioned_write(path, grid, columns, cell_w, cell_h, strip_h, size, captions);
  std::vector<uint8_t> png;
  KILN_TRY(png_encode(grid, png, 6));
  return file_write_atomic(path, png.data(), png.size());
#else
  (void)path;
  (void)images;
  (void)columns;
  (void)captions;
  return unsupported_format("this kiln was built without libspng (KILN_JPEG=OFF): no PNG preview");
#endif
}

}  // namespace kiln
