// The per-image limits of the decoders against hostile files: a decode timeout (JPEG and PNG) and the bound on
// progressive JPEG scans; a slow image in a batch is reported and the others decode.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "io/codec_test_util.h"
#include "kiln/codec.h"

#if KILN_HAS_JPEG
#include <jpeglib.h>

namespace kiln {
namespace {

ImageBuffer noise_image(int32_t w, int32_t h, uint32_t seed) { return test::random_image(w, h, 3, seed); }

std::vector<uint8_t> encoded(const ImageBuffer& image, ImageFormat format) {
  EncodeOptions options;
  options.format = format;
  auto bytes = image_encode(image.view(), options);
  EXPECT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  return bytes.is_ok() ? bytes.value() : std::vector<uint8_t>{};
}

// A valid progressive JPEG of 1 + 3 * 63 * 3 = 568 scans: each AC coefficient of each component in its own scan,
// sent in three successive-approximation steps (the shape of a file made to take long to decode).
std::vector<uint8_t> many_scans_jpeg(const ImageBuffer& image) {
  jpeg_compress_struct info{};
  jpeg_error_mgr err{};
  info.err = jpeg_std_error(&err);
  jpeg_create_compress(&info);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&info, &out, &size);
  info.image_width = static_cast<JDIMENSION>(image.width);
  info.image_height = static_cast<JDIMENSION>(image.height);
  info.input_components = 3;
  info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&info);
  std::vector<jpeg_scan_info> scans;
  scans.push_back({3, {0, 1, 2, 0}, 0, 0, 0, 0});
  for (int c = 0; c < 3; ++c) {
    for (int k = 1; k < 64; ++k) {
      scans.push_back({1, {c, 0, 0, 0}, k, k, 0, 2});
      scans.push_back({1, {c, 0, 0, 0}, k, k, 2, 1});
      scans.push_back({1, {c, 0, 0, 0}, k, k, 1, 0});
    }
  }
  info.scan_info = scans.data();
  info.num_scans = static_cast<int>(scans.size());
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(image.pixels.data()) + static_cast<size_t>(info.next_scanline) * image.width * 3;
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  std::vector<uint8_t> bytes(out, out + size);
  jpeg_destroy_compress(&info);
  std::free(out);
  return bytes;
}

TEST(DecodeLimits, ATimeoutStopsASlowJpegAndPng) {
  const ImageBuffer image = noise_image(3000, 2000, 7);
  for (const ImageFormat format : {ImageFormat::kJpeg, ImageFormat::kPng}) {
    SCOPED_TRACE(image_format_name(format));
    const std::vector<uint8_t> bytes = encoded(image, format);
    DecodeOptions options;
    options.timeout_seconds = 0.001;  // the whole decode takes tens of milliseconds
    auto slow = image_decode(bytes.data(), bytes.size(), options);
    ASSERT_FALSE(slow.is_ok());
    EXPECT_EQ(slow.status().code(), Errc::kUnsupportedFormat);
    EXPECT_NE(slow.status().message().find("took longer than the decode timeout of 0.001 s"), std::string::npos)
        << slow.status().message();
    options.timeout_seconds = 0;  // no limit
    auto whole = image_decode(bytes.data(), bytes.size(), options);
    ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
    EXPECT_EQ(whole->width, 3000);
    EXPECT_EQ(whole->height, 2000);
  }
}

TEST(DecodeLimits, ABatchReportsTheSlowImageAndDecodesTheOthers) {
  const std::vector<uint8_t> slow = encoded(noise_image(4000, 3000, 1), ImageFormat::kJpeg);
  const std::vector<uint8_t> quick = encoded(noise_image(32, 24, 2), ImageFormat::kJpeg);
  const std::vector<EncodedImage> inputs = {{quick.data(), quick.size()}, {slow.data(), slow.size()},
                                            {quick.data(), quick.size()}};
  DecodeOptions options;
  options.timeout_seconds = 0.02;  // ~0.3 s for the 12 Mpx noise image, ~0.1 ms for the small one
  const DecodedBatch batch = image_decode_batch(inputs, options);
  ASSERT_EQ(batch.status.size(), 3u);
  EXPECT_TRUE(batch.status[0].is_ok()) << batch.status[0].to_string();
  EXPECT_NE(batch.status[1].message().find("decode timeout"), std::string::npos) << batch.status[1].to_string();
  EXPECT_TRUE(batch.status[2].is_ok()) << batch.status[2].to_string();
  EXPECT_EQ(batch.images.count(), 2);
}

TEST(DecodeLimits, AProgressiveJpegOfMoreThan500ScansIsRefused) {
  const std::vector<uint8_t> bytes = many_scans_jpeg(noise_image(64, 48, 3));
  auto refused = image_decode(bytes.data(), bytes.size());
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), Errc::kUnsupportedFormat);
  EXPECT_NE(refused.status().message().find("more than 500 scans"), std::string::npos) << refused.status().message();
}

}  // namespace
}  // namespace kiln
#endif
