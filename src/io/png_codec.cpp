#include "io/png_codec.h"

#include <spng.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "io/decode_limits.h"
#include "io/png_direct.h"

namespace kiln {

namespace {

struct SpngCtxDeleter {
  void operator()(spng_ctx* ctx) const { spng_ctx_free(ctx); }
};
using SpngCtx = std::unique_ptr<spng_ctx, SpngCtxDeleter>;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

Status spng_status(Errc code, const char* what, int err) {
  return {code, std::string("png ") + what + ": " + spng_strerror(err)};
}

}  // namespace

Status png_encode(const ImageView& image, std::vector<uint8_t>& out, int32_t compression_level) {
  if (image.type != PixelType::kU8) return unsupported_format("png_encode: PNG stores uint8 images");
  if (image.data == nullptr || image.width <= 0 || image.height <= 0)
    return invalid_argument("png_encode: empty image");
  uint8_t color_type = 0;
  switch (image.channels) {
    case 1: color_type = SPNG_COLOR_TYPE_GRAYSCALE; break;
    case 3: color_type = SPNG_COLOR_TYPE_TRUECOLOR; break;
    case 4: color_type = SPNG_COLOR_TYPE_TRUECOLOR_ALPHA; break;
    default:
      return invalid_argument("png_encode: " + std::to_string(image.channels) + " channels (expected 1, 3 or 4)");
  }
  const size_t row_bytes = static_cast<size_t>(image.width) * static_cast<size_t>(image.channels);
  if (image.row_stride < static_cast<int64_t>(row_bytes)) return invalid_argument("png_encode: row_stride too small");

  SpngCtx ctx(spng_ctx_new(SPNG_CTX_ENCODER));
  if (!ctx) return Status(Errc::kOutOfMemory, "png_encode: cannot create a libspng context");
  spng_set_option(ctx.get(), SPNG_ENCODE_TO_BUFFER, 1);
  const int32_t level = std::clamp(compression_level, 0, 9);
  spng_set_option(ctx.get(), SPNG_IMG_COMPRESSION_LEVEL, level);
  // Charts are flat background with thin strokes: the UP filter turns most of each row into zeros, and at fast
  // levels zlib's run-length strategy packs those runs best. On 224x224 line charts at level 1, UP + Z_RLE was
  // both the fastest and the smallest of none/sub/up/sub|up/all x default/RLE (trying several filters per row
  // cost 2-4x the time for no gain).
  spng_set_option(ctx.get(), SPNG_FILTER_CHOICE, SPNG_FILTER_CHOICE_UP);
  if (level <= 3) spng_set_option(ctx.get(), SPNG_IMG_COMPRESSION_STRATEGY, Z_RLE);

  spng_ihdr ihdr{};
  ihdr.width = static_cast<uint32_t>(image.width);
  ihdr.height = static_cast<uint32_t>(image.height);
  ihdr.bit_depth = 8;
  ihdr.color_type = color_type;
  int err = spng_set_ihdr(ctx.get(), &ihdr);
  if (err != 0) return spng_status(Errc::kInvalidArgument, "encode header", err);

  // Progressive encoding takes one row at a time, so any row_stride works without a packed copy.
  err = spng_encode_image(ctx.get(), nullptr, 0, SPNG_FMT_PNG, SPNG_ENCODE_PROGRESSIVE | SPNG_ENCODE_FINALIZE);
  if (err != 0) return spng_status(Errc::kIoError, "encode", err);
  for (int32_t y = 0; y < image.height; ++y) {
    err = spng_encode_row(ctx.get(), image.row<const uint8_t>(y), row_bytes);
    if (err != 0 && err != SPNG_EOI) return spng_status(Errc::kIoError, "encode row", err);
  }
  if (err != SPNG_EOI) return io_error("png_encode: encoder did not reach the end of the image");

  size_t size = 0;
  int get_err = 0;
  std::unique_ptr<void, FreeDeleter> buffer(spng_get_png_buffer(ctx.get(), &size, &get_err));
  if (!buffer || get_err != 0) return spng_status(Errc::kIoError, "encode buffer", get_err);
  const auto* bytes = static_cast<const uint8_t*>(buffer.get());
  out.insert(out.end(), bytes, bytes + size);
  return Status::ok();
}

Result<DecodedImage> png_decode(const uint8_t* data, size_t size, int64_t max_pixels, const Deadline& deadline) {
  if (data == nullptr || size == 0) return unsupported_format("png_decode: empty input");
  if (std::optional<DecodedImage> direct = png_decode_direct(data, size, max_pixels, deadline)) {
    return std::move(*direct);
  }
  SpngCtx ctx(spng_ctx_new(0));
  if (!ctx) return Status(Errc::kOutOfMemory, "png_decode: cannot create a libspng context");
  // Ancillary chunks are irrelevant here; bound what a hostile file can make libspng buffer.
  spng_set_chunk_limits(ctx.get(), size_t{1} << 24, size_t{1} << 26);
  int err = spng_set_png_buffer(ctx.get(), data, size);
  if (err != 0) return spng_status(Errc::kUnsupportedFormat, "decode", err);

  spng_ihdr ihdr{};
  err = spng_get_ihdr(ctx.get(), &ihdr);
  if (err != 0) return spng_status(Errc::kUnsupportedFormat, "decode header", err);
  const int64_t pixels = static_cast<int64_t>(ihdr.width) * static_cast<int64_t>(ihdr.height);
  KILN_TRY(decode_pixels_check("png_decode", ihdr.width, ihdr.height, max_pixels));

  bool has_alpha = ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA ||
                   ihdr.color_type == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA;
  if (!has_alpha) {
    spng_trns trns{};
    has_alpha = spng_get_trns(ctx.get(), &trns) == 0;
  }
  int fmt = SPNG_FMT_RGB8;
  int32_t channels = 3;
  int flags = 0;
  // 16-bit samples are decoded as they are and rounded to 8 bits below (libspng's 8-bit formats drop the low byte).
  const bool deep = ihdr.bit_depth == 16;
  if (has_alpha) {
    fmt = SPNG_FMT_RGBA8;
    channels = 4;
    flags = SPNG_DECODE_TRNS;
  } else if (ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE) {
    channels = 1;
    // G8 covers gray of up to 8 bits; 16-bit gray goes through RGB8 (scaled) and keeps one channel.
    if (ihdr.bit_depth <= 8) fmt = SPNG_FMT_G8;
  }

  if (deep) {
    fmt = SPNG_FMT_RGBA16;
    flags = SPNG_DECODE_TRNS;
  }
  size_t decoded_size = 0;
  err = spng_decoded_image_size(ctx.get(), fmt, &decoded_size);
  if (err != 0) return spng_status(Errc::kUnsupportedFormat, "decode", err);
  PixelBytes decoded;
  decoded.resize(decoded_size);
  // Row by row, so that the deadline is checked as the image decodes (interlaced rows land where they belong).
  err = spng_decode_image(ctx.get(), nullptr, 0, fmt, flags | SPNG_DECODE_PROGRESSIVE);
  if (err != 0) return spng_status(Errc::kUnsupportedFormat, "decode", err);
  const size_t row_bytes = decoded_size / ihdr.height;
  for (uint32_t rows = 0; err == 0; ++rows) {
    if (rows % 16 == 0 && deadline.passed()) {
      return unsupported_format("png decode: took longer than the decode timeout of " +
                                fmt::format("{:g}", deadline.seconds()) + " s");
    }
    spng_row_info row{};
    err = spng_get_row_info(ctx.get(), &row);
    if (err == 0) err = spng_decode_row(ctx.get(), decoded.data() + row_bytes * row.row_num, row_bytes);
  }
  if (err != SPNG_EOI) return spng_status(Errc::kUnsupportedFormat, "decode", err);
  // libspng stops after the image data; read on to IEND so a truncated or damaged tail is an error too.
  err = spng_decode_chunks(ctx.get());
  if (err != 0) return spng_status(Errc::kUnsupportedFormat, "decode trailing chunks", err);

  DecodedImage result;
  result.width = static_cast<int32_t>(ihdr.width);
  result.height = static_cast<int32_t>(ihdr.height);
  result.channels = channels;
  if (deep) {
    // RGBA16 in host order -> `channels` 8-bit samples, each the nearest level: (v * 255 + 32767) / 65535.
    result.pixels.resize(static_cast<size_t>(pixels) * static_cast<size_t>(channels));
    const auto* samples = reinterpret_cast<const uint16_t*>(decoded.data());
    for (size_t i = 0; i < static_cast<size_t>(pixels); ++i) {
      for (int32_t c = 0; c < channels; ++c) {
        const uint32_t v = samples[i * 4 + static_cast<size_t>(channels == 1 ? 0 : c)];
        result.pixels[i * static_cast<size_t>(channels) + static_cast<size_t>(c)] =
            static_cast<uint8_t>((v * 255 + 32767) / 65535);
      }
    }
  } else if (channels == 1 && fmt != SPNG_FMT_G8) {
    result.pixels.resize(static_cast<size_t>(pixels));
    for (size_t i = 0; i < result.pixels.size(); ++i) result.pixels[i] = decoded[i * 3];
  } else {
    result.pixels = std::move(decoded);
  }
  return result;
}

}  // namespace kiln
