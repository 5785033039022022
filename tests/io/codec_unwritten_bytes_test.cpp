// The decoders write their pixels into memory grown without a zero-fill (io/decode_memory.h), so a row a decoder
// skipped would carry whatever the heap held before. glibc's M_PERTURB fills every fresh heap block with a chosen
// byte: each file here (whole, cut short, with bytes changed, a TIFF with a strip missing, a BMP of RLE skips) is
// decoded under two different fills and must be refused both times or give the same pixels both times. Valgrind's
// memcheck (which replaces the heap, so the fills do not apply) reports the same bytes when it runs these tests.
#include <gtest/gtest.h>
#include <malloc.h>
#include <spng.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/photo_video.h"
#include "io/codec_format_writers.h"
#include "io/crc32.h"
#include "io/decode_memory.h"
#include "kiln/codec.h"

namespace kiln::test {
namespace {

constexpr uint8_t kFillA = 0xAB;
constexpr uint8_t kFillB = 0x35;

// Every heap block malloc hands out while this lives starts as `fill` bytes (glibc; blocks of up to about 1 KB that
// come back from its per-thread cache keep their old bytes).
class HeapFill {
 public:
  explicit HeapFill(uint8_t fill) { mallopt(M_PERTURB, fill ^ 0xFF); }
  ~HeapFill() { mallopt(M_PERTURB, 0); }
  HeapFill(const HeapFill&) = delete;
  HeapFill& operator=(const HeapFill&) = delete;
};

// Reads a fresh block's bytes on purpose: under valgrind (whose heap ignores the fill) this read is its one report.
bool heap_takes_fills() {
  HeapFill fill(kFillA);
  PixelBytes bytes;
  const uint8_t* grown = decode_buffer_grow(bytes, size_t{1} << 20);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (grown[i] != kFillA) return false;
  }
  return true;
}

Result<ImageBuffer> decode_under(uint8_t fill, const Bytes& bytes) {
  HeapFill heap(fill);
  return image_decode(bytes.data(), bytes.size());
}

// Refused under both fills, or the same image under both. Returns whether it decoded.
bool expect_no_heap_bytes(const Bytes& bytes, const std::string& what) {
  const Result<ImageBuffer> a = decode_under(kFillA, bytes);
  const Result<ImageBuffer> b = decode_under(kFillB, bytes);
  EXPECT_EQ(a.is_ok(), b.is_ok()) << what << ": " << (a.is_ok() ? b : a).status().message();
  if (!a.is_ok() || !b.is_ok()) return false;
  EXPECT_EQ(a->width, b->width) << what;
  EXPECT_EQ(a->height, b->height) << what;
  EXPECT_EQ(a->channels, b->channels) << what;
  size_t differing = 0;
  size_t first = 0;
  for (size_t i = a->pixels.size(); i-- > 0;) {
    if (i < b->pixels.size() && a->pixels[i] != b->pixels[i]) ++differing, first = i;
  }
  EXPECT_EQ(a->pixels.size(), b->pixels.size()) << what;
  EXPECT_EQ(differing, 0u) << what << ": bytes that follow the heap's fill, the first at byte " << first << " of "
                           << a->pixels.size() << " (" << a->width << " x " << a->height << " x " << a->channels
                           << ")";
  return true;
}

// The file whole (which must decode unless `whole_refused`), cut at 23 places, and 40 copies each with 1-4 bytes
// changed past its first `header` bytes (seeded); `fix` repairs what a format checks first (PNG's chunk CRCs).
void expect_no_heap_bytes_in_damaged(const Bytes& bytes, const std::string& name, size_t header = 16,
                                     void (*fix)(Bytes&) = nullptr, bool whole_refused = false) {
  EXPECT_NE(expect_no_heap_bytes(bytes, name + " whole"), whole_refused) << name;
  int decoded = 0;
  for (int k = 1; k <= 23; ++k) {
    const Bytes cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(bytes.size() * k / 24));
    decoded += expect_no_heap_bytes(cut, name + " cut to " + std::to_string(cut.size()) + " bytes");
  }
  std::mt19937 rng(7);
  for (int n = 0; n < 40; ++n) {
    Bytes changed = bytes;
    for (int i = 0, count = 1 + n % 4; i < count; ++i) {
      changed[header + rng() % (changed.size() - header)] ^= static_cast<uint8_t>(1 + rng() % 255);
    }
    if (fix != nullptr) fix(changed);
    decoded += expect_no_heap_bytes(changed, name + " changed, copy " + std::to_string(n));
  }
  std::printf("%s: %d of 63 damaged copies decoded\n", name.c_str(), decoded);
}

ImageBuffer test_photo(int32_t channels) {
  DecodeOptions options;
  options.channels = channels;
  Result<ImageBuffer> full = image_decode_file(kAstronautPhoto, options);
  EXPECT_TRUE(full.is_ok()) << full.status().message();
  ImageBuffer crop;
  crop.width = 160;
  crop.height = 120;
  crop.channels = channels;
  for (int32_t y = 40; y < 40 + crop.height; ++y) {
    const uint8_t* row = full->pixels.data() + (static_cast<size_t>(y) * full->width + 140) * channels;
    crop.pixels.insert(crop.pixels.end(), row, row + static_cast<size_t>(crop.width) * channels);
  }
  return crop;
}

Bytes encoded(const ImageBuffer& image, ImageFormat format) {
  EncodeOptions options;
  options.format = format;
  Result<std::vector<uint8_t>> bytes = image_encode(image.view(), options);
  EXPECT_TRUE(bytes.is_ok()) << bytes.status().message();
  return bytes.is_ok() ? std::move(bytes).value() : Bytes();
}

// Adam7-interlaced 8-bit RGB (libspng writes it; libspng reads it: kiln's own reader takes non-interlaced only).
Bytes png_interlaced(const ImageBuffer& rgb) {
  spng_ctx* ctx = spng_ctx_new(SPNG_CTX_ENCODER);
  spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
  spng_ihdr ihdr{};
  ihdr.width = static_cast<uint32_t>(rgb.width);
  ihdr.height = static_cast<uint32_t>(rgb.height);
  ihdr.bit_depth = 8;
  ihdr.color_type = SPNG_COLOR_TYPE_TRUECOLOR;
  ihdr.interlace_method = SPNG_INTERLACE_ADAM7;
  spng_set_ihdr(ctx, &ihdr);
  const int encoded_ok =
      spng_encode_image(ctx, rgb.pixels.data(), rgb.pixels.size(), SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE);
  size_t size = 0;
  int err = 0;
  auto* data = static_cast<uint8_t*>(spng_get_png_buffer(ctx, &size, &err));
  spng_ctx_free(ctx);
  EXPECT_EQ(encoded_ok, 0) << spng_strerror(encoded_ok);
  Bytes out;
  if (data != nullptr) out.assign(data, data + size);
  std::free(data);
  return out;
}

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// Rewrites the CRC of every complete chunk, so that changed bytes reach the zlib stream and the row filters.
void png_crcs_fix(Bytes& png) {
  for (size_t pos = 8; png.size() - pos >= 12;) {
    const uint32_t length = be32(png.data() + pos);
    if (png.size() - pos - 12 < length) return;
    Crc32 crc;
    crc.update(png.data() + pos + 4, 4 + size_t{length});
    for (int i = 0; i < 4; ++i) png[pos + 8 + length + i] = static_cast<uint8_t>(crc.value() >> (24 - 8 * i));
    pos += 12 + size_t{length};
  }
}

uint32_t le(const Bytes& b, size_t at, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | b.at(at + i);
  return v;
}

// The TIFF (little-endian, as libtiff writes it here) with strip `strip`'s byte count set to 0: a strip missing.
Bytes tiff_strip_dropped(Bytes tiff, uint32_t strip) {
  const uint32_t ifd = le(tiff, 4, 4);
  for (uint32_t e = 0, n = le(tiff, ifd, 2); e < n; ++e) {
    const size_t entry = ifd + 2 + size_t{e} * 12;
    if (le(tiff, entry, 2) != 279) continue;  // StripByteCounts
    const int width = le(tiff, entry + 2, 2) == 3 ? 2 : 4;
    const uint32_t count = le(tiff, entry + 4, 4);
    EXPECT_LT(strip, count);
    const size_t at = count * width <= 4 ? entry + 8 : le(tiff, entry + 8, 4);
    for (int i = 0; i < width; ++i) tiff.at(at + strip * width + i) = 0;
    return tiff;
  }
  ADD_FAILURE() << "no StripByteCounts";
  return tiff;
}

void put_le(Bytes& b, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// An 8-bit palette BMP (a gray ramp of 256 colours), 64 x 48 bottom-up, its pixel array `pixels` as given
// (compression 0: rows of 64 bytes; 1: RLE8).
Bytes bmp8(uint32_t compression, const Bytes& pixels) {
  Bytes b = {'B', 'M'};
  const uint32_t offset = 14 + 40 + 256 * 4;
  put_le(b, offset + static_cast<uint32_t>(pixels.size()), 4);
  put_le(b, 0, 4);
  put_le(b, offset, 4);
  for (const uint32_t v : {40u, 64u, 48u}) put_le(b, v, 4);
  put_le(b, 1, 2);
  put_le(b, 8, 2);
  for (const uint32_t v : {compression, static_cast<uint32_t>(pixels.size()), 2835u, 2835u, 256u, 0u}) put_le(b, v, 4);
  for (uint32_t i = 0; i < 256; ++i) put_le(b, i * 0x010101u, 4);
  b.insert(b.end(), pixels.begin(), pixels.end());
  return b;
}

TEST(UnwrittenBytes, TheHeapFillReachesAGrownBuffer) {
  if (!heap_takes_fills()) GTEST_SKIP() << "this heap does not take M_PERTURB fills (ASan's, valgrind's)";
  HeapFill fill(kFillB);
  PixelBytes bytes;
  decode_buffer_grow(bytes, 100000);
  EXPECT_EQ(bytes, std::vector<uint8_t>(100000, kFillB));  // what a decoder that wrote nothing would return
}

TEST(UnwrittenBytes, JpegBaselineProgressiveCmykAndExif) {
  const ImageBuffer photo = test_photo(3);
  expect_no_heap_bytes_in_damaged(encoded(photo, ImageFormat::kJpeg), "jpeg");
  expect_no_heap_bytes_in_damaged(encoded(test_photo(1), ImageFormat::kJpeg), "gray jpeg");
  expect_no_heap_bytes_in_damaged(jpeg_progressive(photo), "progressive jpeg");
  expect_no_heap_bytes_in_damaged(jpeg_cmyk(photo), "cmyk jpeg");
  expect_no_heap_bytes_in_damaged(jpeg_with_exif(photo, 6), "jpeg turned by exif");
}

TEST(UnwrittenBytes, PngDirectAndInterlaced) {
  for (const int32_t channels : {1, 3, 4}) {
    const ImageBuffer photo = test_photo(channels);
    const Bytes png = encoded(photo, ImageFormat::kPng);
    Result<ImageBuffer> whole = image_decode(png.data(), png.size());
    ASSERT_TRUE(whole.is_ok()) << whole.status().message();
    EXPECT_TRUE(whole->pixels == photo.pixels);
    expect_no_heap_bytes_in_damaged(png, "png of " + std::to_string(channels), 33, png_crcs_fix);
  }
  const Bytes interlaced = png_interlaced(test_photo(3));
  ASSERT_FALSE(interlaced.empty());
  expect_no_heap_bytes_in_damaged(interlaced, "interlaced png", 33, png_crcs_fix);
}

TEST(UnwrittenBytes, WebpLossyLosslessAndAlpha) {
  expect_no_heap_bytes_in_damaged(webp_encode(test_photo(3), false), "lossy webp");
  expect_no_heap_bytes_in_damaged(webp_encode(test_photo(3), true), "lossless webp");
  expect_no_heap_bytes_in_damaged(webp_encode(test_photo(4), true), "lossless webp with alpha");
  expect_no_heap_bytes_in_damaged(webp_animated(test_photo(3)), "animated webp");
}

TEST(UnwrittenBytes, TiffStripsTilesAndMissingStrips) {
  const ImageBuffer photo = test_photo(3);
  for (const auto& [kind, name] : {std::pair{TiffKind::kRgb8, "tiff"}, {TiffKind::kGray8, "gray tiff"},
                                   {TiffKind::kTiled, "tiled tiff"}, {TiffKind::kPalette, "palette tiff"},
                                   {TiffKind::kCmyk, "cmyk tiff"}, {TiffKind::kRgb16, "16-bit tiff"}}) {
    const Bytes tiff = tiff_encode(photo, kind);
    expect_no_heap_bytes_in_damaged(tiff, name, 8);
    if (kind == TiffKind::kTiled) continue;
    for (const uint32_t strip : {0u, 3u, 7u}) {  // 120 rows of 16: 8 strips
      const std::string what = std::string(name) + " without strip " + std::to_string(strip);
      // Every reader refuses a missing strip (libtiff's RGBA reader too: it stops on the first error).
      EXPECT_FALSE(expect_no_heap_bytes(tiff_strip_dropped(tiff, strip), what)) << what;
    }
  }
}

TEST(UnwrittenBytes, BmpDirectStbAndRle) {
  for (const int32_t channels : {3, 4}) {
    const ImageBuffer photo = test_photo(channels);
    const Bytes bmp = bmp_encode(photo);
    Result<ImageBuffer> whole = image_decode(bmp.data(), bmp.size());
    ASSERT_TRUE(whole.is_ok()) << whole.status().message();
    EXPECT_TRUE(whole->pixels == photo.pixels) << channels;
    expect_no_heap_bytes_in_damaged(bmp, "bmp of " + std::to_string(channels), 54);
  }
  Bytes rows(64 * 48);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint8_t>(i * 7);
  expect_no_heap_bytes_in_damaged(bmp8(0, rows), "8-bit bmp", 54);
  // RLE8: a run, a delta skipping 5 pixels and 2 rows, an early end of line, an early end of the bitmap.
  const Bytes rle = {10, 200, 0, 2, 5, 2, 3, 90, 0, 0, 4, 30, 0, 1};
  expect_no_heap_bytes_in_damaged(bmp8(1, rle), "rle8 bmp", 54, nullptr, true);  // stb_image refuses RLE
}

}  // namespace
}  // namespace kiln::test
