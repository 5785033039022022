// Pixels come upright by the file's EXIF orientation (1-8), in every format that carries one, against OpenCV's
// flips and rotations of the stored pixels; and an embedded Display P3 profile is converted to sRGB, against the
// colour science evaluated here in float64.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "common/photo_video.h"
#include "io/codec_format_writers.h"
#include "kiln/codec.h"

namespace kiln::test {
namespace {

ImageBuffer orientation_photo() {
  DecodeOptions options;
  options.channels = 3;
  Result<ImageBuffer> full = image_decode_file(kAstronautPhoto, options);
  EXPECT_TRUE(full.is_ok()) << full.status().message();
  ImageBuffer crop;
  crop.width = 96;  // wider than tall, and odd sizes are not needed: every orientation moves every pixel
  crop.height = 64;
  crop.channels = 3;
  for (int32_t y = 60; y < 60 + crop.height; ++y) {
    const uint8_t* row = full->pixels.data() + (static_cast<size_t>(y) * full->width + 180) * 3;
    crop.pixels.insert(crop.pixels.end(), row, row + static_cast<size_t>(crop.width) * 3);
  }
  return crop;
}

// What a viewer shows for `orientation`, by OpenCV (independent of kiln's own orientation code).
ImageBuffer upright_by_opencv(const ImageBuffer& stored, int32_t orientation) {
  const cv::Mat in(stored.height, stored.width, CV_8UC(stored.channels), const_cast<uint8_t*>(stored.pixels.data()));
  cv::Mat out;
  switch (orientation) {
    case 2: cv::flip(in, out, 1); break;
    case 3: cv::rotate(in, out, cv::ROTATE_180); break;
    case 4: cv::flip(in, out, 0); break;
    case 5: cv::transpose(in, out); break;
    case 6: cv::rotate(in, out, cv::ROTATE_90_CLOCKWISE); break;
    case 7: {
      cv::Mat t;
      cv::transpose(in, t);
      cv::rotate(t, out, cv::ROTATE_180);
      break;
    }
    case 8: cv::rotate(in, out, cv::ROTATE_90_COUNTERCLOCKWISE); break;
    default: out = in.clone(); break;
  }
  ImageBuffer result;
  result.width = out.cols;
  result.height = out.rows;
  result.channels = stored.channels;
  result.pixels.assign(out.data, out.data + out.total() * out.elemSize());
  return result;
}

ImageBuffer decode_oriented(const Bytes& bytes, bool orient = true) {
  DecodeOptions options;
  options.orient = orient;
  Result<ImageBuffer> image = image_decode(bytes.data(), bytes.size(), options);
  EXPECT_TRUE(image.is_ok()) << image.status().message();
  return image.is_ok() ? std::move(image).value() : ImageBuffer();
}

double mean_difference(const ImageBuffer& a, const ImageBuffer& b) {
  if (a.width != b.width || a.height != b.height || a.pixels.size() != b.pixels.size()) return 1e9;
  double sum = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) sum += std::abs(int(a.pixels[i]) - int(b.pixels[i]));
  return sum / static_cast<double>(a.pixels.size());
}

void expect_upright(const ImageBuffer& got, const ImageBuffer& want, int32_t orientation, const char* format) {
  EXPECT_EQ(got.width, want.width) << format << " orientation " << orientation;
  EXPECT_EQ(got.height, want.height) << format << " orientation " << orientation;
  EXPECT_TRUE(got.pixels == want.pixels) << format << " orientation " << orientation << ": mean difference "
                                         << mean_difference(got, want);
}

TEST(CodecOrientation, EveryExifOrientationTurnsEveryFormatUpright) {
  const ImageBuffer photo = orientation_photo();
  for (int32_t o = 1; o <= 8; ++o) {
    const ImageBuffer want = upright_by_opencv(photo, o);
    const ImageBuffer png = decode_oriented(png_with_chunks(photo, exif_block(o, false), {}));
    expect_upright(png, want, o, "png eXIf");
    EXPECT_EQ(png.orientation, o);
    expect_upright(decode_oriented(webp_encode(photo, true, o)), want, o, "webp EXIF");
    expect_upright(decode_oriented(tiff_encode(photo, TiffKind::kRgb8, o)), want, o, "tiff tag");
    // JPEG is lossy: its upright decode against its own stored pixels turned by OpenCV.
    const Bytes jpeg = jpeg_with_exif(photo, o);
    const ImageBuffer jpeg_upright = decode_oriented(jpeg);
    expect_upright(jpeg_upright, upright_by_opencv(decode_oriented(jpeg, false), o), o, "jpeg APP1");
    EXPECT_EQ(jpeg_upright.orientation, o);
    // HEIF: libheif turns the pixels by the irot/imir boxes it wrote for `o` (lossy: within its coding error).
    const ImageBuffer heic = decode_oriented(heif_encode(photo, false, o));
    EXPECT_EQ(heic.width, want.width) << "heic orientation " << o;
    EXPECT_LT(mean_difference(heic, want), 4.0) << "heic orientation " << o;
  }
}

TEST(CodecOrientation, OrientOffGivesTheStoredPixels) {
  const ImageBuffer photo = orientation_photo();
  const ImageBuffer stored = decode_oriented(png_with_chunks(photo, exif_block(6, false), {}), false);
  EXPECT_TRUE(stored.pixels == photo.pixels);
  EXPECT_EQ(stored.width, photo.width);
  EXPECT_EQ(stored.orientation, 1);
}

TEST(CodecOrientation, JpegScalingKeepsTheUprightMinimumSize) {
  const ImageBuffer photo = orientation_photo();  // 96 x 64, stored sideways: upright 64 x 96
  DecodeOptions options;
  options.min_width = 30;  // upright 64 wide: half (32) still holds 30
  options.min_height = 40;  // upright 96 tall: half (48) holds 40, a quarter (24) would not
  const Bytes jpeg = jpeg_with_exif(photo, 6);
  Result<ImageBuffer> image = image_decode(jpeg.data(), jpeg.size(), options);
  ASSERT_TRUE(image.is_ok()) << image.status().message();
  EXPECT_EQ(image->width, 32);
  EXPECT_EQ(image->height, 48);
}

// sRGB's transfer function and its inverse (IEC 61966-2-1).
double srgb_decode(double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); }
double srgb_encode(double v) { return v <= 0.0031308 ? v * 12.92 : 1.055 * std::pow(v, 1 / 2.4) - 0.055; }

// A Display P3 colour (sRGB's curve) in sRGB, by the published D65 matrices: P3 -> XYZ -> linear sRGB, clipped.
std::array<double, 3> p3_to_srgb(const uint8_t* p3) {
  static constexpr double kP3ToXyz[3][3] = {
      {0.4865709, 0.2656677, 0.1982173}, {0.2289746, 0.6917385, 0.0792869}, {0.0, 0.0451134, 1.0439444}};
  static constexpr double kXyzToSrgb[3][3] = {
      {3.2404542, -1.5371385, -0.4985314}, {-0.9692660, 1.8760108, 0.0415560}, {0.0556434, -0.2040259, 1.0572252}};
  double linear[3];
  double xyz[3] = {0, 0, 0};
  for (int c = 0; c < 3; ++c) linear[c] = srgb_decode(p3[c] / 255.0);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) xyz[r] += kP3ToXyz[r][c] * linear[c];
  std::array<double, 3> out{};
  for (int r = 0; r < 3; ++r) {
    double v = 0;
    for (int c = 0; c < 3; ++c) v += kXyzToSrgb[r][c] * xyz[c];
    out[r] = 255 * srgb_encode(std::clamp(v, 0.0, 1.0));
  }
  return out;
}

TEST(CodecColour, DisplayP3PixelsBecomeSrgb) {
  const ImageBuffer photo = orientation_photo();
  const ImageBuffer srgb = decode_oriented(png_with_chunks(photo, {}, display_p3_profile()));
  ASSERT_EQ(srgb.pixels.size(), photo.pixels.size());
  // lcms2 works through its D50 connection space (Bradford) in float with 8-bit rounding at each end: within 2.
  double worst = 0;
  int64_t changed = 0;
  for (size_t i = 0; i < photo.pixels.size(); i += 3) {
    const std::array<double, 3> want = p3_to_srgb(photo.pixels.data() + i);
    for (int c = 0; c < 3; ++c) {
      worst = std::max(worst, std::abs(srgb.pixels[i + c] - want[c]));
      changed += srgb.pixels[i + c] != photo.pixels[i + c];
    }
  }
  EXPECT_LE(worst, 2.0);
  EXPECT_GT(changed, static_cast<int64_t>(photo.pixels.size() / 4));  // P3 is wider: most pixels move
  DecodeOptions as_stored;
  as_stored.orient = false;
  const Bytes tagged = png_with_chunks(photo, {}, display_p3_profile());
  Result<ImageBuffer> stored = image_decode(tagged.data(), tagged.size(), as_stored);
  ASSERT_TRUE(stored.is_ok());
  EXPECT_TRUE(stored->pixels == photo.pixels);
}

// A damaged profile is no reason to lose the photo: it is read as sRGB, as browsers do.
TEST(CodecColour, AProfileLcmsCannotReadLeavesThePixelsAsStored) {
  const ImageBuffer photo = orientation_photo();
  const Bytes damaged(300, 0x5A);
  const ImageBuffer image = decode_oriented(png_with_chunks(photo, {}, damaged));
  EXPECT_TRUE(image.pixels == photo.pixels);
}

}  // namespace
}  // namespace kiln::test
