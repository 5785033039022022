// Which image format bytes hold, from their magic bytes, and what they are when they are no image kiln decodes.
#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "io/durable_file.h"  // path_extension
#include "kiln/codec.h"

namespace kiln {

namespace {

bool bytes_start(const uint8_t* data, size_t size, std::string_view magic, size_t at = 0) {
  return size >= at + magic.size() && std::memcmp(data + at, magic.data(), magic.size()) == 0;
}

// ISO BMFF: a 'ftyp' box whose major or compatible brands name a HEIF still image or an AVIF.
bool heif_brands(const uint8_t* data, size_t size) {
  if (!bytes_start(data, size, "ftyp", 4)) return false;
  const size_t box = (size_t{data[0]} << 24) | (size_t{data[1]} << 16) | (size_t{data[2]} << 8) | data[3];
  const size_t end = box < size ? box : size;
  static constexpr std::string_view kBrands[] = {"heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1",
                                                 "avif", "avis"};
  for (size_t at = 8; at + 4 <= end; at += 4) {
    if (at == 12) continue;  // the minor version
    for (std::string_view brand : kBrands) {
      if (std::memcmp(data + at, brand.data(), 4) == 0) return true;
    }
  }
  return false;
}

// BMP's 'BM' is short: the DIB header that follows must have one of the sizes its versions define.
bool bmp_header(const uint8_t* data, size_t size) {
  if (!bytes_start(data, size, "BM") || size < 18) return false;
  const uint32_t dib = data[14] | (data[15] << 8) | (data[16] << 16) | (uint32_t{data[17]} << 24);
  return dib == 12 || dib == 16 || dib == 40 || dib == 52 || dib == 56 || dib == 64 || dib == 108 || dib == 124;
}

std::string lowercase_prefix(const uint8_t* data, size_t size, size_t n) {
  std::string text;
  for (size_t i = 0; i < size && text.size() < n; ++i) {
    if (text.empty() && std::isspace(data[i])) continue;  // leading white space (and a UTF-8 BOM's bytes below)
    if (text.empty() && data[i] >= 0x80) continue;
    text.push_back(static_cast<char>(std::tolower(data[i])));
  }
  return text;
}

}  // namespace

ImageFormat image_format_sniff(const uint8_t* data, size_t size) {
  if (data == nullptr) return ImageFormat::kUnknown;
  if (bytes_start(data, size, "\xFF\xD8\xFF")) return ImageFormat::kJpeg;
  if (bytes_start(data, size, "\x89PNG\r\n\x1A\n")) return ImageFormat::kPng;
  if (bytes_start(data, size, "RIFF") && bytes_start(data, size, "WEBP", 8)) return ImageFormat::kWebp;
  if (bytes_start(data, size, "GIF87a") || bytes_start(data, size, "GIF89a")) return ImageFormat::kGif;
  if (bmp_header(data, size)) return ImageFormat::kBmp;
  if (bytes_start(data, size, std::string_view("II*\0", 4)) || bytes_start(data, size, std::string_view("MM\0*", 4)))
    return ImageFormat::kTiff;
  if (heif_brands(data, size)) return ImageFormat::kHeif;
  return ImageFormat::kUnknown;
}

std::string image_content_describe(const uint8_t* data, size_t size) {
  if (data == nullptr || size == 0) return "empty";
  const std::string text = lowercase_prefix(data, size, 256);
  if (text.rfind("<svg", 0) == 0 || (text.rfind("<?xml", 0) == 0 && text.find("<svg") != std::string::npos))
    return "an SVG drawing (vector graphics are not rasterized)";
  if (bytes_start(data, size, "%PDF")) return "a PDF document";
  if (text.rfind("<!doctype html", 0) == 0 || text.rfind("<html", 0) == 0 || text.rfind("<head", 0) == 0)
    return "an HTML page";
  if (text.rfind("<?xml", 0) == 0) return "an XML document";
  if (bytes_start(data, size, "ftyp", 4)) return "an MP4/QuickTime video";
  if (bytes_start(data, size, "\x1A\x45\xDF\xA3")) return "a Matroska/WebM video";
  if (bytes_start(data, size, "\xFF\x0A") || bytes_start(data, size, std::string_view("\0\0\0\x0CJXL ", 8)))
    return "a JPEG XL image (not supported)";
  if (bytes_start(data, size, std::string_view("\0\0\0\x0CjP  ", 8))) return "a JPEG 2000 image (not supported)";
  if (bytes_start(data, size, "8BPS")) return "a Photoshop document (PSD)";
  if (bytes_start(data, size, std::string_view("\0\0\1\0", 4))) return "a Windows icon (ICO)";
  if (bytes_start(data, size, "PK\x03\x04")) return "a ZIP archive";
  if (bytes_start(data, size, "\x1F\x8B")) return "gzip-compressed data";
  char hex[64];
  int n = std::snprintf(hex, sizeof(hex), "unknown magic bytes");
  for (size_t i = 0; i < 4 && i < size; ++i) n += std::snprintf(hex + n, sizeof(hex) - n, " %02x", data[i]);
  return hex;
}

ImageFormat image_format_from_path(const std::string& path) {
  const std::string ext = path_extension(path);
  if (ext == ".jpg" || ext == ".jpeg") return ImageFormat::kJpeg;
  if (ext == ".png") return ImageFormat::kPng;
  if (ext == ".webp") return ImageFormat::kWebp;
  if (ext == ".gif") return ImageFormat::kGif;
  if (ext == ".bmp") return ImageFormat::kBmp;
  if (ext == ".tif" || ext == ".tiff") return ImageFormat::kTiff;
  if (ext == ".heic" || ext == ".heif" || ext == ".avif") return ImageFormat::kHeif;
  return ImageFormat::kUnknown;
}

}  // namespace kiln
