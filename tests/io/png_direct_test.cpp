#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#if KILN_HAS_JPEG
#include <zlib.h>

#include "io/png_codec.h"
#include "io/png_defilter.h"
#include "io/png_direct.h"

namespace kiln {
namespace {

std::vector<uint8_t> random_bytes(size_t n, std::mt19937& rng) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// The vector paths (3- and 4-byte pixels) equal the scalar reference for every filter, width and byte pattern.
TEST(PngDefilter, VectorRowsEqualTheScalarReference) {
  std::mt19937 rng(3);
  for (size_t bpp : {1, 2, 3, 4, 6, 8}) {
    for (size_t width : {1, 2, 3, 5, 17, 100}) {
      const size_t row_bytes = bpp * width;
      for (uint8_t filter = 0; filter <= 4; ++filter) {
        for (int trial = 0; trial < 20; ++trial) {
          const auto filtered = random_bytes(row_bytes, rng), prev = random_bytes(row_bytes, rng);
          std::vector<uint8_t> fast(row_bytes), reference(row_bytes);
          ASSERT_TRUE(png_defilter_row(filter, filtered.data(), prev.data(), fast.data(), row_bytes, bpp));
          ASSERT_TRUE(png_defilter_row_scalar(filter, filtered.data(), prev.data(), reference.data(), row_bytes, bpp));
          ASSERT_EQ(fast, reference) << "filter " << int{filter} << ", bpp " << bpp << ", width " << width;
        }
      }
      std::vector<uint8_t> row(row_bytes), out(row_bytes);
      EXPECT_FALSE(png_defilter_row(5, row.data(), row.data(), out.data(), row_bytes, bpp));
    }
  }
}

// ---- an independent PNG writer: the specification's filters, zlib, chunks with their CRCs ----------------------

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

std::vector<uint8_t> filter_row(uint8_t type, const uint8_t* row, const uint8_t* prev, size_t row_bytes, size_t bpp) {
  std::vector<uint8_t> out(row_bytes + 1);
  out[0] = type;
  for (size_t i = 0; i < row_bytes; ++i) {
    const int a = i >= bpp ? row[i - bpp] : 0, b = prev ? prev[i] : 0, c = i >= bpp && prev ? prev[i - bpp] : 0;
    const int predicted = type == 1 ? a : type == 2 ? b : type == 3 ? (a + b) / 2 : type == 4 ? paeth(a, b, c) : 0;
    out[i + 1] = static_cast<uint8_t>(row[i] - predicted);
  }
  return out;
}

void chunk_append(std::vector<uint8_t>& png, const char* type, const std::vector<uint8_t>& body) {
  const auto be32 = [&](uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) png.push_back(static_cast<uint8_t>(v >> s));
  };
  be32(static_cast<uint32_t>(body.size()));
  const size_t start = png.size();
  png.insert(png.end(), type, type + 4);
  png.insert(png.end(), body.begin(), body.end());
  be32(static_cast<uint32_t>(crc32(0, png.data() + start, static_cast<uInt>(png.size() - start))));
}

struct PngSpec {
  uint8_t color_type = 2;  // 0 gray, 2 RGB, 6 RGBA
  uint8_t depth = 8;
  uint8_t interlace = 0;
  int filter = -1;                 // the filter of every row; -1: row y uses y % 5
  size_t idat_piece = 0;           // split the zlib stream into IDAT chunks of this many bytes (0: one chunk)
  std::vector<std::string> extra;  // chunk types inserted (empty bodies) between IHDR and IDAT
};

std::vector<uint8_t> png_write(const std::vector<uint8_t>& pixels, uint32_t width, uint32_t height, size_t channels,
                               const PngSpec& spec) {
  const size_t row_bytes = width * channels;
  std::vector<uint8_t> raw;
  for (uint32_t y = 0; y < height; ++y) {
    const uint8_t* row = pixels.data() + row_bytes * y;
    const auto type = static_cast<uint8_t>(spec.filter >= 0 ? spec.filter : y % 5);
    const auto filtered = filter_row(type, row, y > 0 ? row - row_bytes : nullptr, row_bytes, channels);
    raw.insert(raw.end(), filtered.begin(), filtered.end());
  }
  std::vector<uint8_t> z(compressBound(static_cast<uLong>(raw.size())));
  uLongf z_size = static_cast<uLongf>(z.size());
  EXPECT_EQ(compress2(z.data(), &z_size, raw.data(), static_cast<uLong>(raw.size()), 6), Z_OK);
  z.resize(z_size);

  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<uint8_t> ihdr;
  for (uint32_t v : {width, height}) {
    for (int s = 24; s >= 0; s -= 8) ihdr.push_back(static_cast<uint8_t>(v >> s));
  }
  ihdr.insert(ihdr.end(), {spec.depth, spec.color_type, 0, 0, spec.interlace});
  chunk_append(png, "IHDR", ihdr);
  for (const std::string& type : spec.extra) chunk_append(png, type.c_str(), {});
  const size_t piece = spec.idat_piece == 0 ? z.size() : spec.idat_piece;
  for (size_t at = 0; at < z.size(); at += piece) {
    chunk_append(png, "IDAT", std::vector<uint8_t>(z.begin() + at, z.begin() + std::min(z.size(), at + piece)));
    if (spec.idat_piece != 0 && at == 0) chunk_append(png, "IDAT", {});  // an empty IDAT is allowed
  }
  chunk_append(png, "IEND", {});
  return png;
}

std::optional<DecodedImage> direct(const std::vector<uint8_t>& png, int64_t max_pixels = kDecodeMaxPixels) {
  return png_decode_direct(png.data(), png.size(), max_pixels, Deadline::never());
}

TEST(PngDirect, DecodesGrayRgbRgbaWithEveryFilterExactly) {
  std::mt19937 rng(5);
  for (auto [color_type, channels] : {std::pair<uint8_t, size_t>{0, 1}, {2, 3}, {6, 4}}) {
    for (auto [width, height] : {std::pair<uint32_t, uint32_t>{1, 1}, {1, 9}, {7, 5}, {64, 12}, {131, 7}}) {
      for (int filter : {-1, 0, 1, 2, 3, 4}) {
        // Smooth content (where the filters pick different neighbours) plus noise (where they wrap around).
        std::vector<uint8_t> pixels(width * height * channels);
        for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i / 3 + (rng() % 5) * 60);
        PngSpec spec;
        spec.color_type = color_type;
        spec.filter = filter;
        auto decoded = direct(png_write(pixels, width, height, channels, spec));
        ASSERT_TRUE(decoded.has_value()) << "color " << int{color_type} << " " << width << "x" << height;
        EXPECT_EQ(decoded->width, static_cast<int32_t>(width));
        EXPECT_EQ(decoded->height, static_cast<int32_t>(height));
        EXPECT_EQ(decoded->channels, static_cast<int32_t>(channels));
        EXPECT_EQ(decoded->pixels, pixels) << "color " << int{color_type} << ", filter " << filter;
      }
    }
  }
}

TEST(PngDirect, ReadsTheStreamAcrossManyIdatChunksAndSkipsAncillaryOnes) {
  std::mt19937 rng(7);
  std::vector<uint8_t> pixels(40 * 30 * 3);
  for (auto& v : pixels) v = static_cast<uint8_t>(rng() % 4 * 70);
  for (size_t piece : {1, 7, 1000}) {
    PngSpec spec;
    spec.idat_piece = piece;
    spec.extra = {"gAMA", "tEXt", "PLTE"};  // a suggested palette is allowed on RGB
    auto decoded = direct(png_write(pixels, 40, 30, 3, spec));
    ASSERT_TRUE(decoded.has_value()) << piece;
    EXPECT_EQ(decoded->pixels, pixels);
  }
  // The public decoder gives the same pixels through this path.
  const auto png = png_write(pixels, 40, 30, 3, PngSpec{});
  auto decoded = png_decode(png.data(), png.size());
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().message();
  EXPECT_EQ(decoded.value().pixels, pixels);
}

TEST(PngDirect, LeavesOtherFormatsAndDamagedFilesToLibspng) {
  std::vector<uint8_t> pixels(8 * 4 * 3, 90);
  const auto good = png_write(pixels, 8, 4, 3, PngSpec{});
  ASSERT_TRUE(direct(good).has_value());
  const auto not_taken = [&](PngSpec spec, const char* why) {
    EXPECT_FALSE(direct(png_write(pixels, 8, 4, 3, spec)).has_value()) << why;
  };
  PngSpec spec;
  spec.interlace = 1;
  not_taken(spec, "interlaced");
  spec = {};
  spec.depth = 16;
  not_taken(spec, "16-bit");
  spec = {};
  spec.extra = {"tRNS"};
  not_taken(spec, "tRNS");
  spec = {};
  spec.extra = {"ABCD"};
  not_taken(spec, "unknown critical chunk");
  EXPECT_FALSE(direct(good, 31).has_value()) << "over the pixel limit";
  std::vector<uint8_t> iend_with_body(good.begin(), good.end() - 12);
  chunk_append(iend_with_body, "IEND", {0});
  EXPECT_FALSE(direct(iend_with_body).has_value()) << "IEND with a body";
  std::vector<uint8_t> late_palette(good.begin(), good.end() - 12);
  chunk_append(late_palette, "PLTE", {1, 2, 3});
  chunk_append(late_palette, "IEND", {});
  EXPECT_FALSE(direct(late_palette).has_value()) << "PLTE after the image data";
  // Every single damaged byte after the signature: a CRC, the zlib stream or the structure catches it.
  for (size_t pos = 8; pos < good.size(); ++pos) {
    std::vector<uint8_t> bad = good;
    bad[pos] ^= 0x10;
    EXPECT_FALSE(direct(bad).has_value()) << "flip at " << pos;
  }
  for (size_t len = 0; len < good.size(); ++len) {
    EXPECT_FALSE(direct(std::vector<uint8_t>(good.begin(), good.begin() + len)).has_value()) << "prefix " << len;
  }
  // A zlib stream with a wrong Adler-32 but valid chunk CRCs.
  std::vector<uint8_t> raw;
  for (int y = 0; y < 4; ++y) {
    raw.push_back(0);
    raw.insert(raw.end(), 24, 90);
  }
  std::vector<uint8_t> z(compressBound(static_cast<uLong>(raw.size())));
  uLongf z_size = static_cast<uLongf>(z.size());
  ASSERT_EQ(compress2(z.data(), &z_size, raw.data(), static_cast<uLong>(raw.size()), 6), Z_OK);
  z.resize(z_size);
  z.back() ^= 1;
  std::vector<uint8_t> png(good.begin(), good.begin() + 33);  // signature + IHDR
  chunk_append(png, "IDAT", z);
  chunk_append(png, "IEND", {});
  EXPECT_FALSE(direct(png).has_value()) << "bad Adler-32";
  // libspng still decodes what is left to it: gray with a tRNS colour becomes RGBA.
  std::vector<uint8_t> gray(8 * 4, 90);
  PngSpec trns;
  trns.color_type = 0;
  auto with_trns = png_write(gray, 8, 4, 1, trns);
  std::vector<uint8_t> body = {0, 90};  // the transparent gray level
  std::vector<uint8_t> head(with_trns.begin(), with_trns.begin() + 33), tail(with_trns.begin() + 33, with_trns.end());
  chunk_append(head, "tRNS", body);
  head.insert(head.end(), tail.begin(), tail.end());
  auto decoded = png_decode(head.data(), head.size());
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().message();
  EXPECT_EQ(decoded.value().channels, 4);
  EXPECT_EQ(decoded.value().pixels[3], 0);  // transparent
}

}  // namespace
}  // namespace kiln

#else
TEST(PngDirect, SkippedWithoutLibspng) { GTEST_SKIP() << "built with KILN_JPEG=OFF"; }
#endif
