#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#if KILN_HAS_JPEG
#include "io/codec_test_util.h"
#include "io/jpeg_codec.h"

namespace kiln {
namespace {

using test::TestImage;

// Smooth diagonal gradient (per channel slightly shifted), row_stride = packed + padding.
TestImage make_gradient(int32_t width, int32_t height, int32_t channels, int64_t padding) {
  TestImage t = test::test_image(width, height, channels, padding, 0xEE);
  const int64_t stride = t.view.row_stride;
  for (int32_t y = 0; y < height; ++y) {
    for (int32_t x = 0; x < width; ++x) {
      for (int32_t c = 0; c < channels; ++c) {
        const int v = 20 + (x * 150) / width + (y * 60) / height + c * 10;
        t.storage[static_cast<size_t>(y * stride + x * channels + c)] = static_cast<uint8_t>(v);
      }
    }
  }
  return t;
}

int max_abs_error(const ImageView& source, const DecodedImage& decoded) {
  int worst = 0;
  const int32_t channels = decoded.channels;
  for (int32_t y = 0; y < source.height; ++y) {
    const uint8_t* src = source.row<const uint8_t>(y);
    for (int32_t x = 0; x < source.width; ++x) {
      for (int32_t c = 0; c < channels; ++c) {
        const int a = src[x * source.channels + c];
        const int b = decoded.pixels[static_cast<size_t>((y * decoded.width + x) * channels + c)];
        worst = std::max(worst, std::abs(a - b));
      }
    }
  }
  return worst;
}

TEST(JpegCodec, GrayGradientRoundTripHasExactSizeAndSmallError) {
  const TestImage image = make_gradient(64, 48, 1, 0);
  std::vector<uint8_t> jpeg;
  ASSERT_TRUE(jpeg_encode(image.view, jpeg, 95).is_ok());
  ASSERT_GT(jpeg.size(), 2u);
  EXPECT_EQ(jpeg[0], 0xFF);
  EXPECT_EQ(jpeg[1], 0xD8);
  auto decoded = jpeg_decode(jpeg.data(), jpeg.size());
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->width, 64);
  EXPECT_EQ(decoded->height, 48);
  EXPECT_EQ(decoded->channels, 1);
  ASSERT_EQ(decoded->pixels.size(), 64u * 48u);
  // Not zero: JPEG quantizes DCT coefficients. At quality 95 the quantization steps are 1-3 levels and a
  // smooth gradient has almost no high-frequency energy, so a pixel moves by a few levels at most.
  EXPECT_LE(max_abs_error(image.view, decoded.value()), 4);
}

TEST(JpegCodec, OddSizedStridedRgbRoundTrip) {
  for (int32_t channels : {3, 4}) {
    const TestImage image = make_gradient(37, 23, channels, 5);
    std::vector<uint8_t> jpeg;
    ASSERT_TRUE(jpeg_encode(image.view, jpeg, 95).is_ok());
    auto decoded = jpeg_decode(jpeg.data(), jpeg.size());
    ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
    EXPECT_EQ(decoded->width, 37);
    EXPECT_EQ(decoded->height, 23);
    EXPECT_EQ(decoded->channels, 3);
    // Looser than gray: 4:2:0 halves chroma resolution and the RGB<->YCbCr round trip rounds twice; on a
    // smooth gradient with a constant per-channel offset the chroma is nearly flat, so a few levels remain.
    EXPECT_LE(max_abs_error(image.view, decoded.value()), 6);
  }
}

TEST(JpegCodec, LowerQualityIsSmaller) {
  TestImage image = make_gradient(64, 64, 1, 0);
  std::mt19937 rng(3);
  for (auto& v : image.storage) v = static_cast<uint8_t>(v + rng() % 32);
  std::vector<uint8_t> high;
  std::vector<uint8_t> low;
  ASSERT_TRUE(jpeg_encode(image.view, high, 95).is_ok());
  ASSERT_TRUE(jpeg_encode(image.view, low, 30).is_ok());
  EXPECT_LT(low.size(), high.size());
}

TEST(JpegCodec, EncodeAppendsToOutput) {
  const TestImage image = make_gradient(16, 16, 1, 0);
  std::vector<uint8_t> alone;
  ASSERT_TRUE(jpeg_encode(image.view, alone, 90).is_ok());
  std::vector<uint8_t> out = {7, 7};
  ASSERT_TRUE(jpeg_encode(image.view, out, 90).is_ok());
  ASSERT_EQ(out.size(), alone.size() + 2);
  EXPECT_TRUE(std::equal(alone.begin(), alone.end(), out.begin() + 2));
}

TEST(JpegCodec, EncodersInSeparateThreadsAgree) {
  const TestImage image = make_gradient(40, 30, 1, 0);
  std::vector<uint8_t> reference;
  ASSERT_TRUE(jpeg_encode(image.view, reference, 90).is_ok());
  std::vector<std::vector<uint8_t>> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      JpegEncoder encoder;  // one handle per thread
      for (int i = 0; i < 20; ++i) {
        results[t].clear();
        if (!encoder.encode(image.view, results[t], 90).is_ok()) return;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& r : results) EXPECT_EQ(r, reference);
}

TEST(JpegCodec, RefusesFloatAndOddChannels) {
  TestImage image = make_gradient(8, 8, 1, 0);
  std::vector<uint8_t> out;
  EXPECT_EQ(jpeg_encode(test::as_float32(image.view), out, 90).code(), Errc::kUnsupportedFormat);
  EXPECT_EQ(jpeg_encode(test::as_two_channels(image.view), out, 90).code(), Errc::kInvalidArgument);
  EXPECT_TRUE(out.empty());
}

TEST(JpegCodec, TruncatedDataIsAnError) {
  const TestImage image = make_gradient(64, 64, 1, 0);
  std::vector<uint8_t> jpeg;
  ASSERT_TRUE(jpeg_encode(image.view, jpeg, 95).is_ok());
  // Every prefix that cuts the entropy-coded data or the headers (EOI is the last 2 bytes).
  for (size_t len = 0; len + 2 < jpeg.size(); len += 5) {
    auto decoded = jpeg_decode(jpeg.data(), len);
    EXPECT_FALSE(decoded.is_ok()) << "prefix of " << len << " of " << jpeg.size() << " bytes decoded";
  }
}

TEST(JpegCodec, CorruptDataIsAnErrorOrAtWorstTheRightSize) {
  const TestImage image = make_gradient(64, 64, 1, 0);
  std::vector<uint8_t> jpeg;
  ASSERT_TRUE(jpeg_encode(image.view, jpeg, 95).is_ok());
  std::vector<uint8_t> bad_soi = jpeg;
  bad_soi[1] = 0x00;
  auto refused = jpeg_decode(bad_soi.data(), bad_soi.size());
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), Errc::kUnsupportedFormat);

  std::mt19937 rng(5);
  std::vector<uint8_t> garbage(400);
  for (auto& v : garbage) v = static_cast<uint8_t>(rng());
  EXPECT_FALSE(jpeg_decode(garbage.data(), garbage.size()).is_ok());
  EXPECT_FALSE(jpeg_decode(nullptr, 0).is_ok());

  // JPEG has no checksums: a flipped entropy byte can decode to wrong pixels. It must never crash, and what
  // decodes has the declared size.
  int errors = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<uint8_t> bad = jpeg;
    const size_t pos = 2 + rng() % (bad.size() - 2);
    bad[pos] ^= static_cast<uint8_t>(1 + rng() % 255);
    auto decoded = jpeg_decode(bad.data(), bad.size());
    if (!decoded.is_ok()) {
      ++errors;
      continue;
    }
    EXPECT_EQ(decoded->pixels.size(),
              static_cast<size_t>(decoded->width) * decoded->height * decoded->channels);
  }
  EXPECT_GT(errors, 0);
  // The (thread-local) decoder must not carry state from the failures into the next, valid image.
  auto good = jpeg_decode(jpeg.data(), jpeg.size());
  ASSERT_TRUE(good.is_ok()) << good.status().to_string();
  EXPECT_LE(max_abs_error(image.view, good.value()), 4);
}

TEST(JpegCodec, PixelLimitRefusesLargeImages) {
  const TestImage image = make_gradient(100, 50, 1, 0);
  std::vector<uint8_t> jpeg;
  ASSERT_TRUE(jpeg_encode(image.view, jpeg, 80).is_ok());
  ASSERT_NO_FATAL_FAILURE(test::expect_too_large(jpeg_decode(jpeg.data(), jpeg.size(), 100 * 50 - 1)));
  auto accepted = jpeg_decode(jpeg.data(), jpeg.size(), 100 * 50);
  EXPECT_TRUE(accepted.is_ok()) << accepted.status().to_string();
}

TEST(JpegCodec, HeaderClaimingAHugeImageIsRefusedBeforeDecoding) {
  const TestImage image = make_gradient(16, 16, 1, 0);
  std::vector<uint8_t> jpeg;
  ASSERT_TRUE(jpeg_encode(image.view, jpeg, 90).is_ok());
  // Baseline SOF0: FF C0, length (2), precision (1), height (2), width (2).
  size_t sof = 0;
  for (size_t i = 2; i + 8 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) {
      sof = i;
      break;
    }
  }
  ASSERT_GT(sof, 0u);
  for (size_t at : {sof + 5, sof + 7}) {  // 60000 x 60000: a bomb under the default 64 Mpx limit
    jpeg[at] = 60000 >> 8;
    jpeg[at + 1] = 60000 & 0xFF;
  }
  test::expect_too_large(jpeg_decode(jpeg.data(), jpeg.size()));
}

}  // namespace
}  // namespace kiln

#else
TEST(JpegCodec, SkippedWithoutLibturbojpeg) { GTEST_SKIP() << "built with KILN_JPEG=OFF"; }
#endif
