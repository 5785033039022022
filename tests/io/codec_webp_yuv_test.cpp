// Lossy WebP without alpha decodes through libwebp's YUV planes and kiln's AVX-512 conversion
// (io/webp_yuv_rgb_avx512.h): its RGB must be libwebp's own (WebPDecodeRGBInto) byte for byte, on photographs at
// every quality and on odd, tiny and vector-straddling sizes, and on noise whose chroma clips.
#include <gtest/gtest.h>
#include <webp/decode.h>
#include <webp/encode.h>

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/photo_video.h"
#include "core/cpu_isa.h"
#include "io/webp_yuv_rgb_avx512.h"
#include "kiln/codec.h"

namespace kiln::test {
namespace {

constexpr const char* kWebpYuvCoffee = "/usr/lib/python3/dist-packages/skimage/data/coffee.png";
constexpr const char* kWebpYuvChelsea = "/usr/lib/python3/dist-packages/skimage/data/chelsea.png";
constexpr const char* kWebpYuvHubble = "/usr/lib/python3/dist-packages/skimage/data/hubble_deep_field.jpg";

bool webp_yuv_conversion_runs() { return webp_yuv_rgb_avx512_supported() && cpu_isa_active() >= CpuIsa::kAvx2; }

constexpr const char* kWebpYuvSkipReason =
    "this CPU has no AVX-512 (F, BW, VBMI) or KILN_CPU_ISA turned SIMD off: lossy WebP decodes through "
    "WebPDecodeRGBInto alone";

ImageBuffer webp_yuv_photo(const char* path) {
  DecodeOptions options;
  options.channels = 3;
  Result<ImageBuffer> image = image_decode_file(path, options);
  EXPECT_TRUE(image.is_ok()) << path << ": " << image.status().message();
  return image.is_ok() ? std::move(image).value() : ImageBuffer();
}

ImageBuffer webp_yuv_crop(const ImageBuffer& image, int x0, int y0, int width, int height) {
  ImageBuffer out;
  out.width = width;
  out.height = height;
  out.channels = 3;
  for (int y = y0; y < y0 + height; ++y) {
    const uint8_t* row = image.pixels.data() + (static_cast<size_t>(y) * image.width + x0) * 3;
    out.pixels.insert(out.pixels.end(), row, row + static_cast<size_t>(width) * 3);
  }
  return out;
}

std::vector<uint8_t> webp_yuv_encode(const ImageBuffer& rgb, int quality) {
  uint8_t* data = nullptr;
  const size_t size = WebPEncodeRGB(rgb.pixels.data(), rgb.width, rgb.height, rgb.width * 3, quality, &data);
  EXPECT_GT(size, 0u);
  std::vector<uint8_t> bytes(data, data + size);
  WebPFree(data);
  return bytes;
}

std::vector<uint8_t> webp_yuv_libwebp_rgb(const std::vector<uint8_t>& webp, int width, int height) {
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
  EXPECT_NE(WebPDecodeRGBInto(webp.data(), webp.size(), rgb.data(), rgb.size(), width * 3), nullptr);
  return rgb;
}

template <class Bytes1, class Bytes2>
size_t webp_yuv_differing(const Bytes1& a, const Bytes2& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) n += a[i] != b[i];
  return n + (a.size() > b.size() ? a.size() - b.size() : b.size() - a.size());
}

// The conversion itself (planes from WebPDecodeYUVInto) and kiln's decode of the file both give libwebp's RGB.
void expect_webp_yuv_same(const ImageBuffer& source, int quality, const std::string& what) {
  const std::vector<uint8_t> webp = webp_yuv_encode(source, quality);
  const std::vector<uint8_t> want = webp_yuv_libwebp_rgb(webp, source.width, source.height);

  std::vector<uint8_t> storage;
  const WebpYuvPlanes planes = webp_yuv_planes(storage, source.width, source.height);
  ASSERT_NE(WebPDecodeYUVInto(webp.data(), webp.size(), planes.y, planes.y_size, planes.y_stride, planes.u,
                              planes.uv_size, planes.uv_stride, planes.v, planes.uv_size, planes.uv_stride),
            nullptr)
      << what;
  // Rows padded by 5 bytes, which must stay as they were.
  const size_t stride = static_cast<size_t>(source.width) * 3 + 5;
  std::vector<uint8_t> padded(stride * source.height, 0xC3);
  webp_yuv_to_rgb_avx512(planes, source.width, source.height, padded.data(), stride);
  std::vector<uint8_t> converted;
  size_t pad_changed = 0;
  for (int y = 0; y < source.height; ++y) {
    const uint8_t* row = padded.data() + y * stride;
    converted.insert(converted.end(), row, row + stride - 5);
    for (size_t i = stride - 5; i < stride; ++i) pad_changed += row[i] != 0xC3;
  }
  EXPECT_EQ(webp_yuv_differing(converted, want), 0u) << what << ": the conversion";
  EXPECT_EQ(pad_changed, 0u) << what << ": bytes written past a row's end";

  Result<ImageBuffer> decoded = image_decode(webp.data(), webp.size());
  ASSERT_TRUE(decoded.is_ok()) << what << ": " << decoded.status().message();
  EXPECT_EQ(decoded->channels, 3) << what;
  EXPECT_EQ(webp_yuv_differing(decoded->pixels, want), 0u) << what << ": image_decode";
}

std::string webp_yuv_label(int width, int height, int quality) {
  return std::to_string(width) + "x" + std::to_string(height) + " q" + std::to_string(quality);
}

TEST(CodecWebpYuv, PhotosGiveLibwebpsRgbAtEveryQualityAndSize) {
  if (!webp_yuv_conversion_runs()) GTEST_SKIP() << kWebpYuvSkipReason;
  const ImageBuffer astronaut = webp_yuv_photo(kAstronautPhoto);
  const ImageBuffer coffee = webp_yuv_photo(kWebpYuvCoffee);
  const ImageBuffer chelsea = webp_yuv_photo(kWebpYuvChelsea);
  const ImageBuffer rocket = webp_yuv_photo(kRocketPhoto);
  const ImageBuffer hubble = webp_yuv_photo(kWebpYuvHubble);
  struct Case {
    const ImageBuffer* photo;
    int x0, y0, width, height;
  };
  const Case cases[] = {
      {&astronaut, 200, 100, 1, 1}, {&coffee, 300, 10, 1, 57},     {&chelsea, 100, 150, 57, 1},
      {&rocket, 320, 200, 3, 5},    {&astronaut, 180, 60, 17, 33}, {&coffee, 0, 0, 2, 2},
      {&chelsea, 20, 30, 63, 9},    {&rocket, 10, 50, 64, 8},      {&coffee, 100, 40, 65, 7},
      {&chelsea, 7, 11, 129, 66},   {&hubble, 200, 100, 511, 513}, {&astronaut, 0, 0, 512, 512},
      {&hubble, 0, 122, 1000, 750},
  };
  for (const Case& c : cases) {
    const ImageBuffer source = webp_yuv_crop(*c.photo, c.x0, c.y0, c.width, c.height);
    for (const int quality : {50, 75, 90, 100}) {
      expect_webp_yuv_same(source, quality, webp_yuv_label(c.width, c.height, quality));
    }
  }
}

// Noise of saturated colours (each channel 0 or 255) or of any colours drives the chroma to its ends, where the
// conversion's sums leave 0..16383 and clip.
TEST(CodecWebpYuv, NoiseWithExtremeChromaClipsAsLibwebpDoes) {
  if (!webp_yuv_conversion_runs()) GTEST_SKIP() << kWebpYuvSkipReason;
  std::mt19937 rng(54);
  for (const bool saturated : {true, false}) {
    for (const auto& [width, height] : {std::pair{64, 64}, std::pair{129, 67}, std::pair{333, 1}, std::pair{5, 200}}) {
      ImageBuffer noise;
      noise.width = width;
      noise.height = height;
      noise.channels = 3;
      noise.pixels.resize(static_cast<size_t>(width) * height * 3);
      for (uint8_t& v : noise.pixels) v = saturated ? ((rng() & 1) ? 255 : 0) : static_cast<uint8_t>(rng());
      for (const int quality : {50, 100}) {
        expect_webp_yuv_same(noise, quality,
                             (saturated ? "saturated " : "noise ") + webp_yuv_label(width, height, quality));
      }
    }
  }
}

}  // namespace
}  // namespace kiln::test
