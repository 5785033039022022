// JPEG folder sink: price_pattern_{i:06d}.jpg, gray (or RGB with --color, 4:2:0) JPEG at spec.jpeg_quality.
#include <algorithm>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "apps/render/image_folder_sink.h"
#include "io/jpeg_codec.h"

namespace kiln {

namespace {

// One per worker thread: owns its TurboJPEG handle and scratch buffer.
class JpegImageEncoder final : public ImageEncoder {
 public:
  explicit JpegImageEncoder(int32_t quality) : m_quality(quality) {}
  Status encode(const ImageView& image, std::vector<uint8_t>& out) override {
    if (image.type != PixelType::kU8) return unsupported_format("PNG/JPEG store uint8 images; use --dtype uint8 or HDF5/NPY");
    return m_encoder.encode(image, out, m_quality);
  }

 private:
  JpegEncoder m_encoder;
  int32_t m_quality;
};

}  // namespace

Result<std::unique_ptr<ImageSink>> jpeg_sink_create(const OutputSpec& spec) {
  if (spec.jpeg_quality < 1 || spec.jpeg_quality > 100)
    return invalid_argument("JPEG quality must be 1..100, got " + std::to_string(spec.jpeg_quality));
  const int32_t quality = spec.jpeg_quality;
  ImageFolderFormat format;
  format.format = OutputFormat::kJpeg;
  format.extension = "jpg";
  format.detail = fmt::format("q{}", quality);
  format.encoder_create = [quality]() -> std::unique_ptr<ImageEncoder> {
    return std::make_unique<JpegImageEncoder>(quality);
  };
  return image_folder_sink_create(spec, std::move(format));
}

}  // namespace kiln
