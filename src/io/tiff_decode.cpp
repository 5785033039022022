// TIFF through libtiff: the first page; 8-bit RGB(A) and gray straight from its strips or tiles, everything else
// with its RGBA image interface (1-16 bits, RGB, gray, palette, CMYK, YCbCr; 16-bit samples to 8), in stored order
// so that image_decode turns it upright by the orientation tag like every other format. libtiff's allocations are capped (TIFFOpenOptionsSetMaxSingleMemAlloc),
// so a file that claims a huge strip fails instead of allocating it.
#include <tiffio.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "io/decode_limits.h"
#include "io/decode_memory.h"
#include "io/web_codecs.h"

namespace kiln {

namespace {

struct TiffSource {
  const uint8_t* data;
  size_t size;
  toff_t at = 0;
  std::string error;
};

tmsize_t tiff_read(thandle_t h, void* out, tmsize_t length) {
  auto* src = static_cast<TiffSource*>(h);
  if (length < 0 || src->at >= src->size) return 0;
  const size_t n = std::min(static_cast<size_t>(length), src->size - static_cast<size_t>(src->at));
  std::memcpy(out, src->data + src->at, n);
  src->at += n;
  return static_cast<tmsize_t>(n);
}
tmsize_t tiff_write(thandle_t, void*, tmsize_t) { return 0; }
toff_t tiff_seek(thandle_t h, toff_t offset, int whence) {
  auto* src = static_cast<TiffSource*>(h);
  const toff_t base = whence == SEEK_CUR ? src->at : whence == SEEK_END ? src->size : 0;
  src->at = base + offset;
  return src->at;
}
int tiff_close(thandle_t) { return 0; }
toff_t tiff_size(thandle_t h) { return static_cast<TiffSource*>(h)->size; }
// The bytes are in memory already: "mapped", libtiff decodes each strip or tile where it lies instead of copying it
// into a buffer of its own first (a file opened for reading is never written through its map).
int tiff_map(thandle_t h, void** base, toff_t* size) {
  auto* src = static_cast<TiffSource*>(h);
  *base = const_cast<uint8_t*>(src->data);
  *size = src->size;
  return 1;
}
void tiff_unmap(thandle_t, void*, toff_t) {}

int tiff_on_error(TIFF*, void* user, const char* module, const char* fmt, va_list args) {
  auto* src = static_cast<TiffSource*>(user);
  if (!src->error.empty()) return 1;
  char text[512];
  std::vsnprintf(text, sizeof(text), fmt, args);
  src->error = std::string(module != nullptr ? module : "tiff") + ": " + text;
  return 1;
}
int tiff_on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

struct TiffHandles {
  TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
  TIFF* tif = nullptr;
  ~TiffHandles() {
    if (tif != nullptr) TIFFClose(tif);
    TIFFOpenOptionsFree(options);
  }
};

Status tiff_failed(const TiffSource& src, const char* what) {
  return unsupported_format(std::string("tiff: ") + what + (src.error.empty() ? "" : ": " + src.error));
}

// The layouts most TIFFs have, read strip by strip or tile by tile straight into the image (TIFFRGBAImage packs and
// unpacks every pixel through 32 bits): 8-bit, contiguous, RGB (3 samples, or 4 with alpha) or gray (1 sample,
// min-is-black). nullopt: another layout, for the RGBA reader; an error: damaged data.
std::optional<Result<DecodedImage>> tiff_read_direct(TIFF* tif, const TiffSource& src, uint32_t width,
                                                     uint32_t height, const Deadline& deadline) {
  uint16_t bits = 0;
  uint16_t samples = 0;
  uint16_t planar = 0;
  uint16_t photometric = 0;
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &samples);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
  if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric)) return std::nullopt;
  const bool rgb = photometric == PHOTOMETRIC_RGB && (samples == 3 || samples == 4);
  const bool gray = photometric == PHOTOMETRIC_MINISBLACK && samples == 1;
  if (bits != 8 || planar != PLANARCONFIG_CONTIG || !(rgb || gray)) return std::nullopt;
  if (samples == 4) {  // the fourth sample must be alpha (unassociated), not some other extra sample
    uint16_t extra_count = 0;
    uint16_t* extra = nullptr;
    if (!TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &extra_count, &extra) || extra_count != 1 ||
        extra[0] != EXTRASAMPLE_UNASSALPHA) {
      return std::nullopt;
    }
  }
  DecodedImage image;
  image.width = static_cast<int32_t>(width);
  image.height = static_cast<int32_t>(height);
  image.channels = samples;
  const size_t row = size_t{width} * samples;
  decode_buffer_grow(image.pixels, row * height);  // every strip or tile is read into it, or the image is dropped
  const auto damaged = [&] { return std::optional<Result<DecodedImage>>(tiff_failed(src, "damaged image data")); };
  const auto late = [] {
    return std::optional<Result<DecodedImage>>(unsupported_format("tiff: took longer than the decode timeout"));
  };
  if (TIFFIsTiled(tif)) {
    uint32_t tw = 0;
    uint32_t th = 0;
    TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
    if (tw == 0 || th == 0 || TIFFTileSize64(tif) != uint64_t{tw} * th * samples) return std::nullopt;
    std::vector<uint8_t> tile(size_t{tw} * th * samples);
    for (uint32_t ty = 0; ty < height; ty += th) {
      if (deadline.passed()) return late();
      for (uint32_t tx = 0; tx < width; tx += tw) {
        if (TIFFReadTile(tif, tile.data(), tx, ty, 0, 0) < 0) return damaged();
        const uint32_t w = std::min(tw, width - tx);
        for (uint32_t y = ty; y < std::min(height, ty + th); ++y) {
          std::memcpy(image.pixels.data() + y * row + size_t{tx} * samples, tile.data() + size_t{y - ty} * tw * samples,
                      size_t{w} * samples);
        }
      }
    }
    return image;
  }
  uint32_t rows_per_strip = height;
  TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
  rows_per_strip = std::min(std::max(rows_per_strip, 1u), height);
  for (uint32_t y = 0, strip = 0; y < height; y += rows_per_strip, ++strip) {
    if (deadline.passed()) return late();
    const size_t bytes = row * std::min(rows_per_strip, height - y);
    if (TIFFReadEncodedStrip(tif, strip, image.pixels.data() + y * row, static_cast<tmsize_t>(bytes)) !=
        static_cast<tmsize_t>(bytes)) {
      return damaged();
    }
  }
  return image;
}

}  // namespace

Result<DecodedImage> tiff_decode(const uint8_t* data, size_t size, int64_t max_pixels, const Deadline& deadline) {
  TiffSource src{data, size, 0, {}};
  TiffHandles h;
  TIFFOpenOptionsSetMaxSingleMemAlloc(h.options, std::max<tmsize_t>(tmsize_t{64} << 20, max_pixels * 8));
  TIFFOpenOptionsSetErrorHandlerExtR(h.options, tiff_on_error, &src);
  TIFFOpenOptionsSetWarningHandlerExtR(h.options, tiff_on_warning, nullptr);
  h.tif = TIFFClientOpenExt("tiff", "r", &src, tiff_read, tiff_write, tiff_seek, tiff_close, tiff_size, tiff_map,
                            tiff_unmap, h.options);
  if (h.tif == nullptr) return tiff_failed(src, "cannot open");
  uint32_t width = 0;
  uint32_t height = 0;
  TIFFGetField(h.tif, TIFFTAG_IMAGEWIDTH, &width);
  TIFFGetField(h.tif, TIFFTAG_IMAGELENGTH, &height);
  KILN_TRY(decode_pixels_check("tiff", width, height, max_pixels));
  DecodedImage image;
  uint16_t orientation = ORIENTATION_TOPLEFT;
  TIFFGetFieldDefaulted(h.tif, TIFFTAG_ORIENTATION, &orientation);
  image.orientation = orientation >= 1 && orientation <= 8 ? orientation : 1;
  uint16_t photometric = PHOTOMETRIC_RGB;
  TIFFGetFieldDefaulted(h.tif, TIFFTAG_PHOTOMETRIC, &photometric);
  uint32_t icc_size = 0;
  void* icc = nullptr;
  if (photometric != PHOTOMETRIC_SEPARATED && TIFFGetField(h.tif, TIFFTAG_ICCPROFILE, &icc_size, &icc) && icc) {
    image.icc.assign(static_cast<uint8_t*>(icc), static_cast<uint8_t*>(icc) + icc_size);
  }
  if (std::optional<Result<DecodedImage>> direct = tiff_read_direct(h.tif, src, width, height, deadline)) {
    KILN_TRY_ASSIGN(DecodedImage pixels, std::move(*direct));
    pixels.orientation = image.orientation;
    pixels.icc = std::move(image.icc);
    return pixels;
  }
  char message[1024] = {};
  TIFFRGBAImage rgba{};
  // stop_on_error 1: a strip or tile that fails to read refuses the image, as the direct reader does (with 0, libtiff
  // goes on and leaves the damaged rows as they were).
  if (!TIFFRGBAImageOK(h.tif, message) || !TIFFRGBAImageBegin(&rgba, h.tif, 1, message))
    return unsupported_format(std::string("tiff: ") + message);
  rgba.req_orientation = rgba.orientation;  // as stored: image_decode applies the orientation
  if (deadline.passed()) {
    TIFFRGBAImageEnd(&rgba);
    return unsupported_format("tiff: took longer than the decode timeout");
  }
  std::vector<uint32_t> raster(static_cast<size_t>(width) * height);
  const int ok = TIFFRGBAImageGet(&rgba, raster.data(), width, height);
  const bool alpha = rgba.alpha != 0;
  TIFFRGBAImageEnd(&rgba);
  if (!ok) return tiff_failed(src, "damaged image data");
  const bool gray = !alpha && (photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE);
  image.width = static_cast<int32_t>(width);
  image.height = static_cast<int32_t>(height);
  image.channels = gray ? 1 : alpha ? 4 : 3;
  uint8_t* out = decode_buffer_grow(image.pixels, raster.size() * static_cast<size_t>(image.channels));
  for (const uint32_t px : raster) {
    *out++ = static_cast<uint8_t>(TIFFGetR(px));
    if (gray) continue;
    *out++ = static_cast<uint8_t>(TIFFGetG(px));
    *out++ = static_cast<uint8_t>(TIFFGetB(px));
    if (alpha) *out++ = static_cast<uint8_t>(TIFFGetA(px));
  }
  return image;
}

}  // namespace kiln
