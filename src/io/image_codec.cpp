// Image decode and encode behind one API (include/kiln/codec.h): the format's decoder (io/jpeg_codec, png_codec,
// web_codecs), then the orientation and the colour profile; JPEG and PNG encode.
#include "io/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "core/thread_pool.h"
#include "kiln/codec.h"
#include "ops/image_px.h"  // the gray weights every backend uses

#if KILN_HAS_JPEG
#include "io/icc_srgb.h"
#include "io/image_orientation.h"
#include "io/jpeg_codec.h"
#include "io/png_codec.h"
#include "io/png_metadata.h"
#include "io/web_codecs.h"
#endif

namespace kiln {

namespace {

namespace fs = std::filesystem;

Status with_path(const std::string& path, const Status& status) {
  return {status.code(), path + ": " + status.message()};
}

Status options_check(const DecodeOptions& options) {
  if (options.max_pixels <= 0) return invalid_argument("decode: max_pixels must be positive");
  if (!(options.timeout_seconds >= 0)) return invalid_argument("decode: timeout_seconds must be 0 or more");
  if (options.max_file_bytes <= 0) return invalid_argument("decode: max_file_bytes must be positive");
  if (options.channels != 0 && options.channels != 1 && options.channels != 3 && options.channels != 4)
    return invalid_argument("decode: channels must be 0 (as stored), 1, 3 or 4, not " +
                            std::to_string(options.channels));
  if (options.min_width < 0 || options.min_height < 0) return invalid_argument("decode: min size must be >= 0");
  return Status::ok();
}


// libspng accepts a stream that ends inside the IEND chunk (all pixel data present); a file cut anywhere is
// reported as truncated here, so a PNG must contain a complete IEND chunk.
bool png_has_iend(const uint8_t* data, size_t size) {
  static constexpr uint8_t kIend[8] = {'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
  for (size_t i = size; i >= 8; --i) {
    if (data[i - 8] == 'I' && std::memcmp(data + i - 8, kIend, 8) == 0) return true;
  }
  return false;
}

}  // namespace

ImageView ImageBuffer::view() const {
  ImageView v;
  v.data = const_cast<uint8_t*>(pixels.data());
  v.width = width;
  v.height = height;
  v.channels = channels;
  v.row_stride = static_cast<int64_t>(width) * channels;
  v.type = PixelType::kU8;
  v.layout = Layout::kHWC;
  return v;
}

// ---- conversion ---------------------------------------------------------------------------------------------

Result<ImageBuffer> image_convert_channels(const ImageView& image, int32_t channels) {
  if (image.type != PixelType::kU8 || image.layout != Layout::kHWC)
    return invalid_argument("convert: expected a uint8 HWC image");
  if (image.channels != 1 && image.channels != 3 && image.channels != 4)
    return invalid_argument("convert: input has " + std::to_string(image.channels) + " channels (1, 3 or 4)");
  if (channels != 1 && channels != 3 && channels != 4)
    return invalid_argument("convert: cannot convert to " + std::to_string(channels) + " channels (1, 3 or 4)");
  if (image.width < 0 || image.height < 0 || (image.data == nullptr && image.width * image.height > 0))
    return invalid_argument("convert: empty image");
  ImageBuffer out;
  out.width = image.width;
  out.height = image.height;
  out.channels = channels;
  out.pixels.resize(static_cast<size_t>(image.width) * static_cast<size_t>(image.height) *
                    static_cast<size_t>(channels));
  const int32_t cin = image.channels;
  for (int32_t y = 0; y < image.height; ++y) {
    const uint8_t* src = image.row<const uint8_t>(y);
    uint8_t* dst = out.pixels.data() + static_cast<size_t>(y) * static_cast<size_t>(image.width) * channels;
    for (int32_t x = 0; x < image.width; ++x, src += cin, dst += channels) {
      if (channels == 1) {
        dst[0] = cin == 1 ? src[0] : static_cast<uint8_t>(kiln_gray_u8(src[0], src[1], src[2]));
      } else {
        if (cin == 1) {
          dst[0] = dst[1] = dst[2] = src[0];
        } else {
          dst[0] = src[0];
          dst[1] = src[1];
          dst[2] = src[2];
        }
        if (channels == 4) dst[3] = cin == 4 ? src[3] : 255;
      }
    }
  }
  return out;
}

// ---- decode -------------------------------------------------------------------------------------------------

#if KILN_HAS_JPEG
namespace {

Result<DecodedImage> decode_as(ImageFormat format, const uint8_t* data, size_t size, const DecodeOptions& options) {
  const Deadline deadline = Deadline::after(options.timeout_seconds);
  switch (format) {
    case ImageFormat::kJpeg:
      return jpeg_decode(data, size, options.max_pixels, options.min_width, options.min_height, deadline);
    case ImageFormat::kPng: {
      KILN_TRY_ASSIGN(DecodedImage image, png_decode(data, size, options.max_pixels, deadline));
      if (!png_has_iend(data, size)) return unsupported_format("png: truncated (no IEND chunk)");
      PngMetadata meta = png_metadata(data, size);
      image.orientation = meta.orientation;
      image.icc = std::move(meta.icc);
      return image;
    }
    case ImageFormat::kWebp: return webp_decode(data, size, options.max_pixels);
    case ImageFormat::kGif: return gif_decode(data, size, options.max_pixels, deadline);
    case ImageFormat::kBmp: return bmp_decode(data, size, options.max_pixels);
    case ImageFormat::kTiff: return tiff_decode(data, size, options.max_pixels, deadline);
    case ImageFormat::kHeif: return heif_decode(data, size, options.max_pixels);
    case ImageFormat::kUnknown: break;
  }
  return unsupported_format("not an image kiln decodes: " + image_content_describe(data, size) +
                            " (kiln decodes JPEG, PNG, WebP, GIF, BMP, TIFF, HEIC and AVIF)");
}

}  // namespace
#endif

Result<ImageBuffer> image_decode(const uint8_t* data, size_t size, const DecodeOptions& options) {
  KILN_TRY(options_check(options));
#if KILN_HAS_JPEG
  const ImageFormat format = image_format_sniff(data, size);
  Result<DecodedImage> decoded = decode_as(format, data, size, options);
  if (!decoded.is_ok()) {
    // Over the pixel limit is a property of the data, like corruption: UnsupportedFormat for both.
    const Status& s = decoded.status();
    return Status(s.code() == Errc::kInvalidArgument ? Errc::kUnsupportedFormat : s.code(), s.message());
  }
  DecodedImage& img = decoded.value();
  ImageBuffer out;
  if (options.orient) {
    out.orientation = img.orientation;
    image_orient(&img);
    // A profile lcms2 cannot read is ignored, as browsers do: the pixels are shown as sRGB, not refused.
    (void)icc_to_srgb(&img);
  }
  out.width = img.width;
  out.height = img.height;
  out.channels = img.channels;
  out.pixels = std::move(img.pixels);
  if (options.channels == 0 || options.channels == out.channels) return out;
  KILN_TRY_ASSIGN(ImageBuffer converted, image_convert_channels(out.view(), options.channels));
  converted.orientation = out.orientation;
  return converted;
#else
  (void)data;
  (void)size;
  return Status(Errc::kNotImplemented, "decode: kiln was built without its image codecs (KILN_JPEG=OFF)");
#endif
}

Result<ImageBuffer> image_decode_file(const std::string& path, const DecodeOptions& options) {
  if (Status s = options_check(options); !s.is_ok()) return with_path(path, s);
  auto bytes = file_read_all(path, options.max_file_bytes);  // messages already start with the path
  if (!bytes.is_ok()) return bytes.status();
  auto image = image_decode(bytes->data(), bytes->size(), options);
  if (!image.is_ok()) return with_path(path, image.status());
  return image;
}

namespace {

template <typename DecodeOne>
DecodedBatch decode_many(int64_t n, ThreadPool* pool, const DecodeOne& decode_one) {
  std::vector<Result<ImageBuffer>> results(static_cast<size_t>(n), Result<ImageBuffer>(Status()));
  auto work = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) results[static_cast<size_t>(i)] = decode_one(i);
  };
  // Blocks of inputs per worker; each input writes only its own slot.
  parallel_for(pool, n, work);
  DecodedBatch batch;
  batch.status.resize(static_cast<size_t>(n));
  batch.index.assign(static_cast<size_t>(n), -1);
  std::vector<ImageView> views;
  for (int64_t i = 0; i < n; ++i) {
    Result<ImageBuffer>& r = results[static_cast<size_t>(i)];
    if (!r.is_ok()) {
      batch.status[static_cast<size_t>(i)] = r.status();
      continue;
    }
    batch.index[static_cast<size_t>(i)] = static_cast<int64_t>(batch.buffers.size());
    batch.source.push_back(i);
    batch.buffers.push_back(std::move(r).value());
  }
  views.reserve(batch.buffers.size());
  for (const ImageBuffer& b : batch.buffers) views.push_back(b.view());
  batch.images = VarShapeBatch::wrap(std::move(views));
  return batch;
}

}  // namespace

DecodedBatch image_decode_files(const std::vector<std::string>& paths, const DecodeOptions& options,
                                ThreadPool* pool) {
  return decode_many(static_cast<int64_t>(paths.size()), pool,
                     [&](int64_t i) { return image_decode_file(paths[static_cast<size_t>(i)], options); });
}

DecodedBatch image_decode_batch(const std::vector<EncodedImage>& inputs, const DecodeOptions& options,
                                ThreadPool* pool) {
  return decode_many(static_cast<int64_t>(inputs.size()), pool, [&](int64_t i) {
    const EncodedImage& in = inputs[static_cast<size_t>(i)];
    return image_decode(in.data, in.size, options);
  });
}

// ---- encode -------------------------------------------------------------------------------------------------

Result<std::vector<uint8_t>> image_encode(const ImageView& image, const EncodeOptions& options) {
  if (image.type != PixelType::kU8 || image.layout != Layout::kHWC)
    return invalid_argument("encode: expected a uint8 HWC image");
  if (image.data == nullptr || image.width <= 0 || image.height <= 0) return invalid_argument("encode: empty image");
  if (image.channels != 1 && image.channels != 3 && image.channels != 4)
    return invalid_argument("encode: " + std::to_string(image.channels) + " channels (expected 1, 3 or 4)");
#if KILN_HAS_JPEG
  std::vector<uint8_t> out;
  switch (options.format) {
    case ImageFormat::kJpeg:
      if (options.jpeg_quality < 1 || options.jpeg_quality > 100)
        return invalid_argument("encode: JPEG quality must be 1..100");
      KILN_TRY(jpeg_encode(image, out, options.jpeg_quality));
      return out;
    case ImageFormat::kPng:
      if (options.png_compression < 0 || options.png_compression > 9)
        return invalid_argument("encode: PNG compression level must be 0..9");
      KILN_TRY(png_encode(image, out, options.png_compression));
      return out;
    case ImageFormat::kUnknown: return invalid_argument("encode: no format given (jpeg or png)");
    default:
      return Status(Errc::kUnsupportedFormat,
                    std::string("encode: kiln writes JPEG and PNG, not ") + image_format_name(options.format));
  }
#else
  (void)options;
  return Status(Errc::kNotImplemented, "encode: kiln was built without JPEG/PNG support (KILN_JPEG=OFF)");
#endif
}

Status image_encode_file(const ImageView& image, const std::string& path, const EncodeOptions& options) {
  EncodeOptions o = options;
  if (o.format == ImageFormat::kUnknown) o.format = image_format_from_path(path);
  if (o.format == ImageFormat::kUnknown)
    return invalid_argument(path + ": cannot tell the format from the extension (.jpg, .jpeg or .png)");
  auto bytes = image_encode(image, o);
  if (!bytes.is_ok()) return with_path(path, bytes.status());
  return file_write_atomic(path, bytes->data(), bytes->size());
}

}  // namespace kiln
