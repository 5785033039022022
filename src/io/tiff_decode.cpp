// TIFF through libtiff: the first page, read with its RGBA image interface (strips or tiles, 1-16 bits, RGB, gray,
// palette, CMYK, YCbCr; 16-bit samples rounded to 8), in stored order so that image_decode turns it upright by the
// orientation tag like every other format. libtiff's allocations are capped (TIFFOpenOptionsSetMaxSingleMemAlloc),
// so a file that claims a huge strip fails instead of allocating it.
#include <tiffio.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "io/decode_limits.h"
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
int tiff_map(thandle_t, void**, toff_t*) { return 0; }
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

}  // namespace

Result<DecodedImage> tiff_decode(const uint8_t* data, size_t size, int64_t max_pixels, const Deadline& deadline) {
  TiffSource src{data, size, 0, {}};
  TiffHandles h;
  TIFFOpenOptionsSetMaxSingleMemAlloc(h.options, std::max<tmsize_t>(tmsize_t{64} << 20, max_pixels * 8));
  TIFFOpenOptionsSetErrorHandlerExtR(h.options, tiff_on_error, &src);
  TIFFOpenOptionsSetWarningHandlerExtR(h.options, tiff_on_warning, nullptr);
  h.tif = TIFFClientOpenExt("tiff", "rm", &src, tiff_read, tiff_write, tiff_seek, tiff_close, tiff_size, tiff_map,
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
  char message[1024] = {};
  TIFFRGBAImage rgba{};
  if (!TIFFRGBAImageOK(h.tif, message) || !TIFFRGBAImageBegin(&rgba, h.tif, 0, message))
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
  image.pixels.resize(raster.size() * static_cast<size_t>(image.channels));
  uint8_t* out = image.pixels.data();
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
