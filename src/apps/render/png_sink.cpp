// PNG folder sink: price_pattern_{i:06d}.png, gray (or RGB with --color) 8-bit, deflate at spec.compression_level.
#include <algorithm>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "apps/render/image_folder_sink.h"
#include "io/png_codec.h"

namespace kiln {

namespace {

class PngImageEncoder final : public ImageEncoder {
 public:
  explicit PngImageEncoder(int32_t level) : m_level(level) {}
  Status encode(const ImageView& image, std::vector<uint8_t>& out) override {
    if (image.type != PixelType::kU8) return unsupported_format("PNG/JPEG store uint8 images; use --dtype uint8 or HDF5/NPY");
    return png_encode(image, out, m_level);
  }

 private:
  int32_t m_level;
};

}  // namespace

Result<std::unique_ptr<ImageSink>> png_sink_create(const OutputSpec& spec) {
  // PNG is always deflate; --compression none maps to level 0 (stored), zstd/gzip use the given level.
  const int32_t level = spec.compression == Compression::kNone ? 0 : std::clamp(spec.compression_level, 0, 9);
  ImageFolderFormat format;
  format.format = OutputFormat::kPng;
  format.extension = "png";
  format.detail = fmt::format("zlib-{}", level);
  format.encoder_create = [level]() -> std::unique_ptr<ImageEncoder> {
    return std::make_unique<PngImageEncoder>(level);
  };
  return image_folder_sink_create(spec, std::move(format));
}

}  // namespace kiln
