#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#if KILN_HAS_JPEG
#include <zlib.h>

#include "io/codec_test_util.h"
#include "io/png_codec.h"

namespace kiln {
namespace {

using test::TestImage;

// A packed or strided u8 image with deterministic random content.
TestImage make_random(int32_t width, int32_t height, int32_t channels, int64_t padding, uint32_t seed) {
  TestImage t = test::test_image(width, height, channels, padding, 0);
  std::mt19937 rng(seed);
  for (auto& v : t.storage) v = static_cast<uint8_t>(rng());
  return t;
}

// Compares the decoded packed pixels with the (possibly strided) source.
void expect_same_pixels(const ImageView& source, const DecodedImage& decoded) {
  ASSERT_EQ(decoded.width, source.width);
  ASSERT_EQ(decoded.height, source.height);
  ASSERT_EQ(decoded.channels, source.channels);
  ASSERT_EQ(decoded.pixels.size(), source.packed_bytes());
  const size_t row_bytes = static_cast<size_t>(source.width) * source.channels;
  for (int32_t y = 0; y < source.height; ++y) {
    const uint8_t* src = source.row<const uint8_t>(y);
    const uint8_t* dst = decoded.pixels.data() + row_bytes * static_cast<size_t>(y);
    ASSERT_TRUE(std::equal(src, src + row_bytes, dst)) << "row " << y;
  }
}

TEST(PngCodec, GrayRoundTripIsLosslessAndExactSize) {
  const TestImage image = make_random(37, 23, 1, 0, 1);
  std::vector<uint8_t> png;
  ASSERT_TRUE(png_encode(image.view, png).is_ok());
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png[1], 'P');
  auto decoded = png_decode(png.data(), png.size());
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  expect_same_pixels(image.view, decoded.value());
}

TEST(PngCodec, StridedRgbAndRgbaRoundTrip) {
  for (int32_t channels : {3, 4}) {
    const TestImage image = make_random(19, 11, channels, 13, 2 + channels);
    std::vector<uint8_t> png;
    ASSERT_TRUE(png_encode(image.view, png, 6).is_ok());
    auto decoded = png_decode(png.data(), png.size());
    ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
    expect_same_pixels(image.view, decoded.value());
  }
}

TEST(PngCodec, EveryCompressionLevelDecodesTheSame) {
  const TestImage image = make_random(16, 9, 1, 3, 7);
  for (int32_t level : {0, 1, 9}) {
    std::vector<uint8_t> png;
    ASSERT_TRUE(png_encode(image.view, png, level).is_ok());
    auto decoded = png_decode(png.data(), png.size());
    ASSERT_TRUE(decoded.is_ok());
    expect_same_pixels(image.view, decoded.value());
  }
}

TEST(PngCodec, EncodeAppendsToOutput) {
  const TestImage image = make_random(8, 8, 1, 0, 3);
  std::vector<uint8_t> alone;
  ASSERT_TRUE(png_encode(image.view, alone).is_ok());
  std::vector<uint8_t> out = {1, 2, 3};
  ASSERT_TRUE(png_encode(image.view, out).is_ok());
  ASSERT_EQ(out.size(), alone.size() + 3);
  EXPECT_EQ(out[0], 1);
  EXPECT_TRUE(std::equal(alone.begin(), alone.end(), out.begin() + 3));
}

TEST(PngCodec, RefusesFloatAndOddChannels) {
  TestImage image = make_random(8, 8, 1, 0, 4);
  std::vector<uint8_t> out;
  EXPECT_EQ(png_encode(test::as_float32(image.view), out).code(), Errc::kUnsupportedFormat);
  EXPECT_EQ(png_encode(test::as_two_channels(image.view), out).code(), Errc::kInvalidArgument);
  ImageView empty;
  EXPECT_EQ(png_encode(empty, out).code(), Errc::kInvalidArgument);
  EXPECT_TRUE(out.empty());
}

TEST(PngCodec, TruncatedDataIsAnErrorAtEveryLength) {
  const TestImage image = make_random(32, 32, 1, 0, 5);
  std::vector<uint8_t> png;
  ASSERT_TRUE(png_encode(image.view, png).is_ok());
  // Every prefix up to the last 4 bytes: those are IEND's CRC, a constant libspng does not insist on reading.
  for (size_t len = 0; len + 4 < png.size(); len += 3) {
    auto decoded = png_decode(png.data(), len);
    EXPECT_FALSE(decoded.is_ok()) << "prefix of " << len << " of " << png.size() << " bytes decoded";
  }
  // All image data present but no IEND: still truncated.
  auto no_iend = png_decode(png.data(), png.size() - 12);
  EXPECT_FALSE(no_iend.is_ok());
}

TEST(PngCodec, CorruptDataIsAnError) {
  const TestImage image = make_random(32, 32, 1, 0, 6);
  std::vector<uint8_t> png;
  ASSERT_TRUE(png_encode(image.view, png).is_ok());
  // Every byte after the signature is covered by a chunk CRC: flipping any one must be detected.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint8_t> bad = png;
    const size_t pos = 8 + rng() % (bad.size() - 8);
    bad[pos] ^= static_cast<uint8_t>(1 + rng() % 255);
    auto decoded = png_decode(bad.data(), bad.size());
    EXPECT_FALSE(decoded.is_ok()) << "flip at " << pos << " decoded";
  }
  std::vector<uint8_t> garbage(500);
  for (auto& v : garbage) v = static_cast<uint8_t>(rng());
  auto decoded = png_decode(garbage.data(), garbage.size());
  ASSERT_FALSE(decoded.is_ok());
  EXPECT_EQ(decoded.status().code(), Errc::kUnsupportedFormat);
  EXPECT_FALSE(png_decode(nullptr, 0).is_ok());
}

TEST(PngCodec, PixelLimitRefusesLargeImages) {
  const TestImage image = make_random(100, 50, 1, 0, 8);
  std::vector<uint8_t> png;
  ASSERT_TRUE(png_encode(image.view, png).is_ok());
  ASSERT_NO_FATAL_FAILURE(test::expect_too_large(png_decode(png.data(), png.size(), 100 * 50 - 1)));
  auto accepted = png_decode(png.data(), png.size(), 100 * 50);
  EXPECT_TRUE(accepted.is_ok());
}

TEST(PngCodec, HeaderClaimingAHugeImageIsRefusedBeforeDecoding) {
  const TestImage image = make_random(16, 16, 1, 0, 9);
  std::vector<uint8_t> png;
  ASSERT_TRUE(png_encode(image.view, png).is_ok());
  // IHDR follows the 8-byte signature: length (4), "IHDR" (4), width (4), height (4), ..., CRC over type+data.
  ASSERT_EQ(std::string(png.begin() + 12, png.begin() + 16), "IHDR");
  const uint32_t huge = 60000;  // 3.6 Gpx: a decompression bomb under the default 64 Mpx limit
  for (int field = 0; field < 2; ++field) {
    for (int b = 0; b < 4; ++b) png[16 + field * 4 + b] = static_cast<uint8_t>(huge >> (24 - 8 * b));
  }
  const uLong crc = crc32(0, png.data() + 12, 17);
  for (int b = 0; b < 4; ++b) png[29 + b] = static_cast<uint8_t>(crc >> (24 - 8 * b));
  test::expect_too_large(png_decode(png.data(), png.size()));
}

}  // namespace
}  // namespace kiln

#else
TEST(PngCodec, SkippedWithoutLibspng) { GTEST_SKIP() << "built with KILN_JPEG=OFF"; }
#endif
