// Every format a crawler meets decodes to the pixels of the same photo as PNG: exactly for the lossless ones, within
// a stated tolerance for the lossy ones; animations give their first frame; damaged, truncated, oversized and
// unknown content is refused with a clear error.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <string>

#include "common/photo_video.h"
#include "io/codec_format_writers.h"
#include "kiln/codec.h"

namespace kiln::test {
namespace {

ImageBuffer photo_crop(int32_t x0, int32_t y0, int32_t w, int32_t h) {
  DecodeOptions options;
  options.channels = 3;
  Result<ImageBuffer> full = image_decode_file(kAstronautPhoto, options);
  EXPECT_TRUE(full.is_ok()) << full.status().message();
  ImageBuffer crop;
  crop.width = w;
  crop.height = h;
  crop.channels = 3;
  for (int32_t y = y0; y < y0 + h; ++y) {
    const uint8_t* row = full->pixels.data() + (static_cast<size_t>(y) * full->width + x0) * 3;
    crop.pixels.insert(crop.pixels.end(), row, row + static_cast<size_t>(w) * 3);
  }
  return crop;
}

// The face of the astronaut and around it, wider than tall (orientation tests tell width from height).
ImageBuffer test_photo() { return photo_crop(140, 40, 160, 120); }

ImageBuffer decoded(const Bytes& bytes, DecodeOptions options = {}) {
  Result<ImageBuffer> image = image_decode(bytes.data(), bytes.size(), options);
  EXPECT_TRUE(image.is_ok()) << image.status().message();
  return image.is_ok() ? std::move(image).value() : ImageBuffer();
}

double mean_abs_difference(const ImageBuffer& a, const ImageBuffer& b) {
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  EXPECT_EQ(a.channels, b.channels);
  if (a.pixels.size() != b.pixels.size() || a.pixels.empty()) return 1e9;
  double sum = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) sum += std::abs(int(a.pixels[i]) - int(b.pixels[i]));
  return sum / static_cast<double>(a.pixels.size());
}

void expect_same_pixels(const ImageBuffer& got, const ImageBuffer& want, const std::string& what) {
  EXPECT_EQ(got.width, want.width) << what;
  EXPECT_EQ(got.height, want.height) << what;
  EXPECT_EQ(got.channels, want.channels) << what;
  EXPECT_TRUE(got.pixels == want.pixels) << what << ": mean difference " << mean_abs_difference(got, want);
}

TEST(CodecFormats, EachFormatIsKnownByItsContent) {
  const ImageBuffer photo = test_photo();
  const std::pair<Bytes, ImageFormat> cases[] = {
      {webp_encode(photo, true), ImageFormat::kWebp},
      {gif_encode(palette_quantize(photo)), ImageFormat::kGif},
      {bmp_encode(photo), ImageFormat::kBmp},
      {tiff_encode(photo, TiffKind::kRgb8), ImageFormat::kTiff},
      {heif_encode(photo, false), ImageFormat::kHeif},
      {heif_encode(photo, true), ImageFormat::kHeif},
  };
  for (const auto& [bytes, format] : cases) {
    EXPECT_EQ(image_format_sniff(bytes.data(), bytes.size()), format) << image_format_name(format);
  }
}

TEST(CodecFormats, LosslessFormatsGiveThePhotosPixelsExactly) {
  const ImageBuffer photo = test_photo();
  expect_same_pixels(decoded(webp_encode(photo, true)), photo, "webp lossless");
  expect_same_pixels(decoded(bmp_encode(photo)), photo, "bmp 24-bit");
  expect_same_pixels(decoded(tiff_encode(photo, TiffKind::kRgb8)), photo, "tiff rgb strips");
  expect_same_pixels(decoded(tiff_encode(photo, TiffKind::kTiled)), photo, "tiff rgb tiles");
  expect_same_pixels(decoded(tiff_encode(photo, TiffKind::kRgb16)), photo, "tiff 16-bit rgb");
  expect_same_pixels(decoded(tiff_encode(photo, TiffKind::kCmyk)), photo, "tiff cmyk");
  const ImageBuffer palette = palette_quantize(photo);
  expect_same_pixels(decoded(gif_encode(palette)), palette, "gif");
  expect_same_pixels(decoded(gif_encode(palette, -1, 1, true)), palette, "gif interlaced");
  expect_same_pixels(decoded(tiff_encode(palette, TiffKind::kPalette)), palette, "tiff palette");
  ImageBuffer gray = photo;
  gray.channels = 1;
  gray.pixels.clear();
  for (size_t i = 0; i < photo.pixels.size(); i += 3) gray.pixels.push_back(photo.pixels[i]);
  expect_same_pixels(decoded(tiff_encode(photo, TiffKind::kGray8)), gray, "tiff gray");
}

// Lossy at quality 90 (WebP, HEVC, AV1) and 95 (the CMYK JPEG): the mean difference of a good encoder at those
// qualities on a photo is about 1-2 levels; 4 fails on a wrong colour conversion, channel order or chroma siting.
TEST(CodecFormats, LossyFormatsGiveThePhotoWithinTheirCodingError) {
  const ImageBuffer photo = test_photo();
  EXPECT_LT(mean_abs_difference(decoded(webp_encode(photo, false)), photo), 4.0) << "webp";
  EXPECT_LT(mean_abs_difference(decoded(heif_encode(photo, false)), photo), 4.0) << "heic";
  EXPECT_LT(mean_abs_difference(decoded(heif_encode(photo, true)), photo), 4.0) << "avif";
  EXPECT_LT(mean_abs_difference(decoded(jpeg_cmyk(photo)), photo), 4.0) << "cmyk jpeg";
}

TEST(CodecFormats, AnimationsGiveTheirFirstFrame) {
  const ImageBuffer photo = test_photo();
  ImageBuffer rgba = decoded(webp_animated(photo));
  ASSERT_EQ(rgba.channels, 4);
  Result<ImageBuffer> rgb = image_convert_channels(rgba.view(), 3);
  ASSERT_TRUE(rgb.is_ok());
  expect_same_pixels(*rgb, photo, "animated webp");
  const ImageBuffer palette = palette_quantize(photo);
  expect_same_pixels(decoded(gif_encode(palette, -1, 3)), palette, "animated gif");
}

TEST(CodecFormats, GifTransparencyBecomesAlpha) {
  const ImageBuffer palette = palette_quantize(test_photo());
  const ImageBuffer image = decoded(gif_encode(palette, /*transparent_index=*/0));  // index 0: black
  ASSERT_EQ(image.channels, 4);
  int64_t transparent = 0;
  for (size_t i = 0; i < palette.pixels.size() / 3; ++i) {
    const uint8_t* want = palette.pixels.data() + i * 3;
    const uint8_t* got = image.pixels.data() + i * 4;
    const bool black = want[0] == 0 && want[1] == 0 && want[2] == 0;
    transparent += black;
    ASSERT_EQ(got[3], black ? 0 : 255) << i;
    if (!black) {
      ASSERT_TRUE(got[0] == want[0] && got[1] == want[1] && got[2] == want[2]) << i;
    }
  }
  EXPECT_GT(transparent, 0);  // the photo has black pixels, so the case was exercised
}

TEST(CodecFormats, UnknownContentIsNamedInTheError) {
  const std::pair<std::string, std::string> cases[] = {
      {"<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>", "SVG drawing"},
      {"%PDF-1.7\n", "PDF document"},
      {"<!DOCTYPE html><html></html>", "HTML page"},
      {std::string("\0\0\0\x18" "ftypisom", 12), "MP4/QuickTime video"},
      {"hello", "unknown magic bytes 68 65 6c 6c"},
  };
  for (const auto& [content, name] : cases) {
    Result<ImageBuffer> image = image_decode(reinterpret_cast<const uint8_t*>(content.data()), content.size());
    ASSERT_FALSE(image.is_ok());
    EXPECT_EQ(image.status().code(), Errc::kUnsupportedFormat);
    EXPECT_NE(image.status().message().find(name), std::string::npos) << image.status().message();
  }
}

TEST(CodecFormats, TruncatedAndDamagedFilesOfEveryFormatFailCleanly) {
  const ImageBuffer photo = test_photo();
  const std::pair<std::string, Bytes> files[] = {
      {"webp", webp_encode(photo, false)},       {"gif", gif_encode(palette_quantize(photo))},
      {"bmp", bmp_encode(photo)},                {"tiff", tiff_encode(photo, TiffKind::kRgb8)},
      {"heic", heif_encode(photo, false)},       {"avif", heif_encode(photo, true)},
      {"cmyk jpeg", jpeg_cmyk(photo)},
  };
  for (const auto& [name, bytes] : files) {
    for (const double keep : {0.1, 0.5, 0.9}) {
      const size_t n = static_cast<size_t>(static_cast<double>(bytes.size()) * keep);
      Result<ImageBuffer> image = image_decode(bytes.data(), n);
      EXPECT_FALSE(image.is_ok()) << name << " cut to " << n << " of " << bytes.size() << " bytes";
      if (!image.is_ok()) {
        EXPECT_EQ(image.status().code(), Errc::kUnsupportedFormat) << image.status().message();
      }
    }
  }
}

TEST(CodecFormats, ImagesOverThePixelLimitAreRefusedAfterTheirHeader) {
  const ImageBuffer photo = test_photo();
  DecodeOptions small;
  small.max_pixels = 1000;
  for (const Bytes& bytes : {webp_encode(photo, true), gif_encode(palette_quantize(photo)), bmp_encode(photo),
                             tiff_encode(photo, TiffKind::kRgb8), heif_encode(photo, false)}) {
    Result<ImageBuffer> image = image_decode(bytes.data(), bytes.size(), small);
    ASSERT_FALSE(image.is_ok());
    EXPECT_NE(image.status().message().find("exceeds the limit"), std::string::npos) << image.status().message();
  }
  // A GIF whose screen claims 60,000 x 60,000 in a file of a few bytes: refused at its header.
  Bytes bomb = {'G', 'I', 'F', '8', '9', 'a', 0x60, 0xEA, 0x60, 0xEA, 0, 0, 0, ';'};
  Result<ImageBuffer> image = image_decode(bomb.data(), bomb.size());
  ASSERT_FALSE(image.is_ok());
  EXPECT_NE(image.status().message().find("60000x60000"), std::string::npos) << image.status().message();
}

// 16-bit samples are rounded to the nearest 8-bit level, not cut to their high byte (200 / 65535 * 255 = 0.78 -> 1;
// 65407 -> 254.502 -> 255; 257 v -> v exactly).
TEST(CodecFormats, SixteenBitPngSamplesAreRounded) {
  const std::vector<uint16_t> levels = {200, 65407, 0, 65535, 257 * 77, 128, 127, 32895};
  const std::vector<uint8_t> want = {1, 255, 0, 255, 77, 0, 0, 128};
  for (const int32_t channels : {1, 3, 4}) {
    std::vector<uint16_t> samples;
    for (const uint16_t v : levels) samples.insert(samples.end(), static_cast<size_t>(channels), v);
    const Bytes png = png16_encode(samples, static_cast<int32_t>(levels.size()), 1, channels);
    const ImageBuffer image = decoded(png);
    ASSERT_EQ(image.channels, channels);
    for (size_t i = 0; i < levels.size(); ++i) {
      for (int32_t c = 0; c < channels; ++c) {
        EXPECT_EQ(image.pixels[i * channels + c], want[i]) << channels << " channels, level " << levels[i];
      }
    }
  }
}

// An animation of 10,000 frames costs its first frame: the rest is never read.
TEST(CodecFormats, AGifOfTenThousandFramesGivesItsFirst) {
  const ImageBuffer tiny = palette_quantize(photo_crop(200, 100, 8, 8));
  const Bytes gif = gif_encode(tiny, -1, 10000);
  expect_same_pixels(decoded(gif), tiny, "10,000-frame gif");
}

// A TIFF header with one RGB strip of `side` x `side` pixels whose byte count claims nearly 4 GiB, in a file of a
// few hundred bytes.
Bytes tiff_claiming(uint32_t side) {
  Bytes tiff = {'I', 'I', 42, 0, 8, 0, 0, 0};
  const std::vector<std::array<uint32_t, 3>> entries = {
      {256, 4, side}, {257, 4, side}, {258, 3, 8},    {259, 3, 1},           {262, 3, 2},
      {273, 4, 200},  {277, 3, 3},    {278, 4, side}, {279, 4, 0xFFFFFF00u}};
  tiff.push_back(static_cast<uint8_t>(entries.size()));
  tiff.push_back(0);
  for (const auto& [tag, type, value] : entries) {
    for (const uint32_t v : {tag, type}) {
      tiff.push_back(static_cast<uint8_t>(v));
      tiff.push_back(static_cast<uint8_t>(v >> 8));
    }
    for (const uint32_t v : {1u, value}) {
      for (int i = 0; i < 4; ++i) tiff.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
  }
  tiff.resize(tiff.size() + 4 + 64, 0x55);
  return tiff;
}

TEST(CodecFormats, ATiffClaimingAHugeImageOrStripFailsWithinTheLimits) {
  // 60,000 x 60,000: refused at its header, before libtiff is asked for anything.
  Bytes tiff = tiff_claiming(60000);
  Result<ImageBuffer> image = image_decode(tiff.data(), tiff.size());
  ASSERT_FALSE(image.is_ok());
  EXPECT_NE(image.status().message().find("60000x60000"), std::string::npos) << image.status().message();
  // 2,000 x 2,000 (within the limit) whose strip claims 4 GiB: the strip's read fails; nothing past the image's
  // own 12 MB is allocated.
  tiff = tiff_claiming(2000);
  image = image_decode(tiff.data(), tiff.size());
  ASSERT_FALSE(image.is_ok());
  EXPECT_EQ(image.status().code(), Errc::kUnsupportedFormat) << image.status().message();
  EXPECT_NE(image.status().message().find("tiff"), std::string::npos) << image.status().message();
}

}  // namespace
}  // namespace kiln::test
