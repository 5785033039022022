#include "io/codec_format_writers.h"

#include <gif_lib.h>
#include <lcms2.h>
#include <spng.h>
#include <libheif/heif.h>
#include <stb/stb_image_write.h>
#include <tiffio.h>
#include <webp/encode.h>
#include <webp/mux.h>
#include <zlib.h>

// jpeglib.h needs FILE declared first.
#include <cstdio>
#include <jpeglib.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <unistd.h>

namespace kiln::test {

namespace {

void put_be32(Bytes* out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out->push_back(static_cast<uint8_t>(v >> s));
}

void png_chunk_append(Bytes* out, const char* type, const Bytes& data) {
  put_be32(out, static_cast<uint32_t>(data.size()));
  const size_t start = out->size();
  out->insert(out->end(), type, type + 4);
  out->insert(out->end(), data.begin(), data.end());
  put_be32(out, static_cast<uint32_t>(crc32(0, out->data() + start, static_cast<uInt>(out->size() - start))));
}

Bytes encode_or_throw(const ImageBuffer& image, ImageFormat format, int32_t quality = 95) {
  EncodeOptions options;
  options.format = format;
  options.jpeg_quality = quality;
  Result<Bytes> bytes = image_encode(image.view(), options);
  if (!bytes.is_ok()) throw std::runtime_error(bytes.status().message());
  return std::move(bytes).value();
}

std::string temp_path(const char* suffix) {
  static std::atomic<int> counter{0};
  return (std::filesystem::temp_directory_path() /
          ("kiln_formats_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + suffix))
      .string();
}

Bytes file_take(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Bytes bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  return bytes;
}

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test writer: ") + what);
}

}  // namespace

Bytes exif_block(int32_t orientation, bool with_exif_header) {
  Bytes b;
  if (with_exif_header) b = {'E', 'x', 'i', 'f', 0, 0};
  const Bytes tiff = {'I', 'I', 42, 0, 8, 0, 0, 0,  // header, IFD0 at 8
                      1, 0,                          // one entry
                      0x12, 0x01, 3, 0, 1, 0, 0, 0,  // orientation, SHORT, count 1
                      static_cast<uint8_t>(orientation), 0, 0, 0,
                      0, 0, 0, 0};  // no next IFD
  b.insert(b.end(), tiff.begin(), tiff.end());
  return b;
}

Bytes png_with_chunks(const ImageBuffer& image, const Bytes& exif_tiff, const Bytes& icc) {
  const Bytes png = encode_or_throw(image, ImageFormat::kPng);
  Bytes out(png.begin(), png.begin() + 33);  // signature + IHDR
  if (!exif_tiff.empty()) png_chunk_append(&out, "eXIf", exif_tiff);
  if (!icc.empty()) {
    Bytes iccp = {'p', 'r', 'o', 'f', 0, 0};
    uLongf size = compressBound(static_cast<uLong>(icc.size()));
    Bytes packed(size);
    check(compress(packed.data(), &size, icc.data(), static_cast<uLong>(icc.size())) == Z_OK, "zlib");
    iccp.insert(iccp.end(), packed.begin(), packed.begin() + static_cast<std::ptrdiff_t>(size));
    png_chunk_append(&out, "iCCP", iccp);
  }
  out.insert(out.end(), png.begin() + 33, png.end());
  return out;
}

Bytes jpeg_with_exif(const ImageBuffer& image, int32_t orientation, int32_t quality) {
  const Bytes jpeg = encode_or_throw(image, ImageFormat::kJpeg, quality);
  const Bytes exif = exif_block(orientation);
  Bytes out = {0xFF, 0xD8, 0xFF, 0xE1, static_cast<uint8_t>((exif.size() + 2) >> 8),
               static_cast<uint8_t>(exif.size() + 2)};
  out.insert(out.end(), exif.begin(), exif.end());
  out.insert(out.end(), jpeg.begin() + 2, jpeg.end());
  return out;
}

namespace {

// libjpeg writing `samples` (`components` per pixel, row-major) to memory; `configure` runs after jpeg_set_defaults.
template <class Configure>
Bytes jpeg_compress_memory(const uint8_t* samples, int32_t width, int32_t height, int components, J_COLOR_SPACE space,
                           Configure configure) {
  jpeg_compress_struct info{};
  jpeg_error_mgr err{};
  info.err = jpeg_std_error(&err);
  jpeg_create_compress(&info);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&info, &buffer, &size);
  info.image_width = static_cast<JDIMENSION>(width);
  info.image_height = static_cast<JDIMENSION>(height);
  info.input_components = components;
  info.in_color_space = space;
  jpeg_set_defaults(&info);
  configure(info);
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(samples) + static_cast<size_t>(info.next_scanline) * width * components;
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  Bytes out(buffer, buffer + size);
  std::free(buffer);
  return out;
}

}  // namespace

Bytes jpeg_cmyk(const ImageBuffer& rgb, int32_t quality) {
  std::vector<uint8_t> cmyk(static_cast<size_t>(rgb.width) * rgb.height * 4);
  for (size_t i = 0; i < cmyk.size() / 4; ++i) {
    const uint8_t* p = rgb.pixels.data() + i * 3;
    // Inverted: K' = 255 - K = max(R, G, B); C' = R / K' * 255 (so that R = C' K' / 255).
    const int kk = std::max({p[0], p[1], p[2]});
    for (int c = 0; c < 3; ++c) cmyk[i * 4 + c] = static_cast<uint8_t>(kk == 0 ? 0 : (p[c] * 255 + kk / 2) / kk);
    cmyk[i * 4 + 3] = static_cast<uint8_t>(kk);
  }
  return jpeg_compress_memory(cmyk.data(), rgb.width, rgb.height, 4, JCS_CMYK, [&](jpeg_compress_struct& info) {
    jpeg_set_colorspace(&info, JCS_YCCK);  // as Photoshop stores it; the Adobe marker says so
    info.write_Adobe_marker = TRUE;
    jpeg_set_quality(&info, quality, TRUE);
  });
}

Bytes jpeg_progressive(const ImageBuffer& rgb) {
  return jpeg_compress_memory(rgb.pixels.data(), rgb.width, rgb.height, 3, JCS_RGB,
                              [](jpeg_compress_struct& info) { jpeg_simple_progression(&info); });
}

Bytes webp_encode(const ImageBuffer& rgb, bool lossless, int32_t orientation) {
  uint8_t* data = nullptr;
  const size_t size = lossless ? WebPEncodeLosslessRGB(rgb.pixels.data(), rgb.width, rgb.height, rgb.width * 3, &data)
                               : WebPEncodeRGB(rgb.pixels.data(), rgb.width, rgb.height, rgb.width * 3, 90, &data);
  check(size > 0, "webp encode");
  Bytes plain(data, data + size);
  WebPFree(data);
  if (orientation == 1) return plain;
  WebPMux* mux = WebPMuxNew();
  const WebPData image{plain.data(), plain.size()};
  const Bytes exif = exif_block(orientation, false);
  const WebPData exif_data{exif.data(), exif.size()};
  check(WebPMuxSetImage(mux, &image, 1) == WEBP_MUX_OK && WebPMuxSetChunk(mux, "EXIF", &exif_data, 1) == WEBP_MUX_OK,
        "webp mux");
  WebPData assembled;
  WebPDataInit(&assembled);
  check(WebPMuxAssemble(mux, &assembled) == WEBP_MUX_OK, "webp mux assemble");
  Bytes out(assembled.bytes, assembled.bytes + assembled.size);
  WebPDataClear(&assembled);
  WebPMuxDelete(mux);
  return out;
}

Bytes webp_animated(const ImageBuffer& first) {
  WebPAnimEncoderOptions options;
  check(WebPAnimEncoderOptionsInit(&options), "webp anim options");
  WebPAnimEncoder* encoder = WebPAnimEncoderNew(first.width, first.height, &options);
  WebPConfig config;
  check(WebPConfigInit(&config), "webp config");
  config.lossless = 1;
  ImageBuffer second = first;
  for (uint8_t& v : second.pixels) v = static_cast<uint8_t>(255 - v);
  int timestamp = 0;
  for (const ImageBuffer* frame : {&first, static_cast<const ImageBuffer*>(&second)}) {
    WebPPicture picture;
    check(WebPPictureInit(&picture), "webp picture");
    picture.width = frame->width;
    picture.height = frame->height;
    picture.use_argb = 1;
    check(WebPPictureImportRGB(&picture, frame->pixels.data(), frame->width * 3), "webp import");
    check(WebPAnimEncoderAdd(encoder, &picture, timestamp, &config), "webp anim add");
    WebPPictureFree(&picture);
    timestamp += 100;
  }
  check(WebPAnimEncoderAdd(encoder, nullptr, timestamp, nullptr), "webp anim end");
  WebPData data;
  WebPDataInit(&data);
  check(WebPAnimEncoderAssemble(encoder, &data), "webp anim assemble");
  Bytes out(data.bytes, data.bytes + data.size);
  WebPDataClear(&data);
  WebPAnimEncoderDelete(encoder);
  return out;
}

ImageBuffer palette_quantize(const ImageBuffer& rgb) {
  ImageBuffer q = rgb;
  for (uint8_t& v : q.pixels) v = static_cast<uint8_t>((v + 25) / 51 * 51);
  return q;
}

namespace {

int gif_write(GifFileType* gif, const GifByteType* data, int length) {
  auto* out = static_cast<Bytes*>(gif->UserData);
  out->insert(out->end(), data, data + length);
  return length;
}

}  // namespace

Bytes gif_encode(const ImageBuffer& rgb, int32_t transparent_index, int32_t frames, bool interlaced) {
  Bytes out;
  int err = 0;
  GifFileType* gif = EGifOpen(&out, gif_write, &err);
  check(gif != nullptr, "gif open");
  ColorMapObject* palette = GifMakeMapObject(256, nullptr);
  for (int i = 0; i < 216; ++i) {
    palette->Colors[i] = {uint8_t(i / 36 * 51), uint8_t(i / 6 % 6 * 51), uint8_t(i % 6 * 51)};
  }
  EGifSetGifVersion(gif, true);
  check(EGifPutScreenDesc(gif, rgb.width, rgb.height, 8, 0, palette) == GIF_OK, "gif screen");
  std::vector<GifPixelType> indices(static_cast<size_t>(rgb.width) * rgb.height);
  for (size_t i = 0; i < indices.size(); ++i) {
    const uint8_t* p = rgb.pixels.data() + i * 3;
    indices[i] = static_cast<GifPixelType>(p[0] / 51 * 36 + p[1] / 51 * 6 + p[2] / 51);
  }
  std::vector<int32_t> rows;
  for (int32_t y = 0; y < rgb.height; ++y) rows.push_back(y);
  if (interlaced) {
    rows.clear();
    for (auto [start, step] : {std::pair{0, 8}, {4, 8}, {2, 4}, {1, 2}})
      for (int32_t y = start; y < rgb.height; y += step) rows.push_back(y);
  }
  for (int32_t f = 0; f < frames; ++f) {
    const GifByteType control[4] = {static_cast<GifByteType>(transparent_index >= 0 ? 1 : 0), 10, 0,
                                    static_cast<GifByteType>(transparent_index >= 0 ? transparent_index : 0)};
    check(EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, control) == GIF_OK, "gif control");
    check(EGifPutImageDesc(gif, 0, 0, rgb.width, rgb.height, interlaced, nullptr) == GIF_OK, "gif image");
    for (int32_t y : rows) {
      std::vector<GifPixelType> line(indices.begin() + static_cast<std::ptrdiff_t>(y) * rgb.width,
                                     indices.begin() + static_cast<std::ptrdiff_t>(y + 1) * rgb.width);
      if (f > 0) std::rotate(line.begin(), line.begin() + 1, line.end());
      check(EGifPutLine(gif, line.data(), rgb.width) == GIF_OK, "gif line");
    }
  }
  check(EGifCloseFile(gif, &err) == GIF_OK, "gif close");
  GifFreeMapObject(palette);
  return out;
}

namespace {

void bmp_write(void* context, void* data, int size) {
  auto* out = static_cast<Bytes*>(context);
  out->insert(out->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
}

}  // namespace

Bytes bmp_encode(const ImageBuffer& image) {
  Bytes out;
  check(stbi_write_bmp_to_func(bmp_write, &out, image.width, image.height, image.channels, image.pixels.data()),
        "bmp write");
  return out;
}

Bytes png16_encode(const std::vector<uint16_t>& samples, int32_t width, int32_t height, int32_t channels) {
  spng_ctx* ctx = spng_ctx_new(SPNG_CTX_ENCODER);
  spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
  spng_ihdr ihdr{};
  ihdr.width = static_cast<uint32_t>(width);
  ihdr.height = static_cast<uint32_t>(height);
  ihdr.bit_depth = 16;
  ihdr.color_type = channels == 1   ? SPNG_COLOR_TYPE_GRAYSCALE
                    : channels == 3 ? SPNG_COLOR_TYPE_TRUECOLOR
                                    : SPNG_COLOR_TYPE_TRUECOLOR_ALPHA;
  spng_set_ihdr(ctx, &ihdr);
  // SPNG_FMT_PNG: the PNG's own layout, 16-bit samples in host order (libspng writes them big-endian).
  check(spng_encode_image(ctx, samples.data(), samples.size() * 2, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE) == 0,
        "png16 encode");
  size_t size = 0;
  int err = 0;
  auto* data = static_cast<uint8_t*>(spng_get_png_buffer(ctx, &size, &err));
  check(data != nullptr, "png16 buffer");
  Bytes out(data, data + size);
  std::free(data);
  spng_ctx_free(ctx);
  return out;
}

Bytes tiff_encode(const ImageBuffer& rgb, TiffKind kind, int32_t orientation) {
  const std::string path = temp_path(".tif");
  TIFF* tif = TIFFOpen(path.c_str(), "w");
  check(tif != nullptr, "tiff open");
  const uint32_t w = static_cast<uint32_t>(rgb.width);
  const uint32_t h = static_cast<uint32_t>(rgb.height);
  const bool gray = kind == TiffKind::kGray8 || kind == TiffKind::kPalette;
  const uint16_t samples = kind == TiffKind::kCmyk ? 4 : gray ? 1 : 3;
  const uint16_t bits = kind == TiffKind::kRgb16 ? 16 : 8;
  TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, w);
  TIFFSetField(tif, TIFFTAG_IMAGELENGTH, h);
  TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, samples);
  TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, bits);
  TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE);
  TIFFSetField(tif, TIFFTAG_ORIENTATION, static_cast<uint16_t>(orientation));
  uint16_t photometric = PHOTOMETRIC_RGB;
  if (kind == TiffKind::kGray8) photometric = PHOTOMETRIC_MINISBLACK;
  if (kind == TiffKind::kPalette) photometric = PHOTOMETRIC_PALETTE;
  if (kind == TiffKind::kCmyk) photometric = PHOTOMETRIC_SEPARATED;
  TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, photometric);
  std::vector<uint16_t> map[3];
  if (kind == TiffKind::kPalette) {
    for (int c = 0; c < 3; ++c) map[c].assign(256, 0);
    for (int i = 0; i < 216; ++i) {
      map[0][i] = static_cast<uint16_t>(i / 36 * 51 * 257);
      map[1][i] = static_cast<uint16_t>(i / 6 % 6 * 51 * 257);
      map[2][i] = static_cast<uint16_t>(i % 6 * 51 * 257);
    }
    TIFFSetField(tif, TIFFTAG_COLORMAP, map[0].data(), map[1].data(), map[2].data());
  }
  if (kind == TiffKind::kCmyk) TIFFSetField(tif, TIFFTAG_INKSET, INKSET_CMYK);
  const size_t px_bytes = static_cast<size_t>(samples) * bits / 8;
  std::vector<uint8_t> pixels(static_cast<size_t>(w) * h * px_bytes);
  for (size_t i = 0; i < static_cast<size_t>(w) * h; ++i) {
    const uint8_t* p = rgb.pixels.data() + i * 3;
    uint8_t* q = pixels.data() + i * px_bytes;
    switch (kind) {
      case TiffKind::kRgb16:
        for (int c = 0; c < 3; ++c) {
          const uint16_t v = static_cast<uint16_t>(p[c] * 257);
          std::memcpy(q + c * 2, &v, 2);
        }
        break;
      case TiffKind::kGray8: q[0] = p[0]; break;
      case TiffKind::kPalette: q[0] = static_cast<uint8_t>(p[0] / 51 * 36 + p[1] / 51 * 6 + p[2] / 51); break;
      case TiffKind::kCmyk: q[0] = 255 - p[0]; q[1] = 255 - p[1]; q[2] = 255 - p[2]; q[3] = 0; break;
      default: std::memcpy(q, p, 3); break;
    }
  }
  const size_t row = static_cast<size_t>(w) * px_bytes;
  if (kind == TiffKind::kTiled) {
    constexpr uint32_t kTile = 64;
    TIFFSetField(tif, TIFFTAG_TILEWIDTH, kTile);
    TIFFSetField(tif, TIFFTAG_TILELENGTH, kTile);
    std::vector<uint8_t> tile(kTile * kTile * px_bytes);
    for (uint32_t ty = 0; ty < h; ty += kTile) {
      for (uint32_t tx = 0; tx < w; tx += kTile) {
        std::fill(tile.begin(), tile.end(), 0);
        for (uint32_t y = ty; y < std::min(h, ty + kTile); ++y) {
          const uint32_t n = std::min(w, tx + kTile) - tx;
          std::memcpy(tile.data() + (y - ty) * kTile * px_bytes, pixels.data() + y * row + tx * px_bytes,
                      n * px_bytes);
        }
        check(TIFFWriteTile(tif, tile.data(), tx, ty, 0, 0) >= 0, "tiff tile");
      }
    }
  } else {
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, 16u);
    for (uint32_t y = 0; y < h; ++y) check(TIFFWriteScanline(tif, pixels.data() + y * row, y, 0) >= 0, "tiff row");
  }
  TIFFClose(tif);
  return file_take(path);
}

namespace {

heif_error heif_collect(heif_context*, const void* data, size_t size, void* user) {
  auto* out = static_cast<Bytes*>(user);
  out->insert(out->end(), static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + size);
  return {heif_error_Ok, heif_suberror_Unspecified, "ok"};
}

}  // namespace

Bytes heif_encode(const ImageBuffer& rgb, bool avif, int32_t orientation) {
  heif_context* context = heif_context_alloc();
  heif_encoder* encoder = nullptr;
  check(heif_context_get_encoder_for_format(context, avif ? heif_compression_AV1 : heif_compression_HEVC, &encoder)
                .code == heif_error_Ok,
        avif ? "no AV1 encoder in libheif" : "no HEVC encoder in libheif");
  heif_encoder_set_lossy_quality(encoder, 90);
  heif_image* image = nullptr;
  heif_image_create(rgb.width, rgb.height, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image);
  heif_image_add_plane(image, heif_channel_interleaved, rgb.width, rgb.height, 8);
  int stride = 0;
  uint8_t* plane = heif_image_get_plane(image, heif_channel_interleaved, &stride);
  for (int32_t y = 0; y < rgb.height; ++y)
    std::memcpy(plane + static_cast<size_t>(stride) * y, rgb.pixels.data() + static_cast<size_t>(y) * rgb.width * 3,
                static_cast<size_t>(rgb.width) * 3);
  heif_encoding_options* options = heif_encoding_options_alloc();
  options->image_orientation = static_cast<heif_orientation>(orientation);
  check(heif_context_encode_image(context, image, encoder, options, nullptr).code == heif_error_Ok, "heif encode");
  Bytes out;
  heif_writer writer{1, heif_collect};
  check(heif_context_write(context, &writer, &out).code == heif_error_Ok, "heif write");
  heif_encoding_options_free(options);
  heif_image_release(image);
  heif_encoder_release(encoder);
  heif_context_free(context);
  return out;
}

Bytes display_p3_profile() {
  const cmsCIExyY white{0.3127, 0.3290, 1.0};
  const cmsCIExyYTRIPLE primaries{{0.680, 0.320, 1.0}, {0.265, 0.690, 1.0}, {0.150, 0.060, 1.0}};
  // The sRGB tone curve: IEC 61966-2-1's parametric type 4.
  const cmsFloat64Number params[5] = {2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045};
  cmsToneCurve* curve = cmsBuildParametricToneCurve(nullptr, 4, params);
  cmsToneCurve* curves[3] = {curve, curve, curve};
  cmsHPROFILE profile = cmsCreateRGBProfile(&white, &primaries, curves);
  cmsMLU* description = cmsMLUalloc(nullptr, 1);
  cmsMLUsetASCII(description, "en", "US", "Display P3 (kiln test)");
  cmsWriteTag(profile, cmsSigProfileDescriptionTag, description);
  cmsUInt32Number size = 0;
  cmsSaveProfileToMem(profile, nullptr, &size);
  Bytes out(size);
  cmsSaveProfileToMem(profile, out.data(), &size);
  cmsMLUfree(description);
  cmsCloseProfile(profile);
  cmsFreeToneCurve(curve);
  return out;
}

}  // namespace kiln::test
