// Decode/encode through include/kiln/codec.h: sniffing, round trips, corrupt and truncated data, decompression-bomb
// limits, channel conversions (checked against OpenCV's cvtColor), files and the batch decoder.
#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <vector>

#include "common/image_ops_util.h"
#include "common/test_util.h"
#include "core/thread_pool.h"
#include "io/codec_test_util.h"
#include "io/durable_file.h"
#include "kiln/codec.h"

#if KILN_HAS_JPEG
#include <zlib.h>

namespace kiln {
namespace {

namespace fs = std::filesystem;
using test::random_image;

// A smooth gradient: JPEG keeps it close to the source.
ImageBuffer smooth_image(int32_t w, int32_t h, int32_t c) {
  ImageBuffer b;
  b.width = w;
  b.height = h;
  b.channels = c;
  b.pixels.resize(static_cast<size_t>(w) * h * c);
  for (int32_t y = 0; y < h; ++y)
    for (int32_t x = 0; x < w; ++x)
      for (int32_t k = 0; k < c; ++k)
        b.pixels[(static_cast<size_t>(y) * w + x) * c + k] = static_cast<uint8_t>(x + y + k * 30 + 20);
  return b;
}

std::vector<uint8_t> encode(const ImageBuffer& img, ImageFormat format) {
  EncodeOptions o;
  o.format = format;
  auto bytes = image_encode(img.view(), o);
  EXPECT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  return bytes.is_ok() ? bytes.value() : std::vector<uint8_t>{};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  ASSERT_TRUE(file_write_atomic(path, bytes.data(), bytes.size()).is_ok());
}

void put_be32(std::vector<uint8_t>& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
}

// Signature + IHDR (8-bit RGB) + an empty IDAT + IEND, CRCs correct: a valid header for any claimed size.
std::vector<uint8_t> png_header_only(uint32_t width, uint32_t height) {
  std::vector<uint8_t> out = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  auto chunk = [&](const char* type, const std::vector<uint8_t>& data) {
    put_be32(out, static_cast<uint32_t>(data.size()));
    std::vector<uint8_t> body(type, type + 4);
    body.insert(body.end(), data.begin(), data.end());
    out.insert(out.end(), body.begin(), body.end());
    put_be32(out, static_cast<uint32_t>(crc32(0, body.data(), static_cast<uInt>(body.size()))));
  };
  std::vector<uint8_t> ihdr;
  put_be32(ihdr, width);
  put_be32(ihdr, height);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});
  chunk("IHDR", ihdr);
  chunk("IDAT", {0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01});
  chunk("IEND", {});
  return out;
}

TEST(CodecSniff, MagicBytes) {
  const uint8_t jpeg[] = {0xFF, 0xD8, 0xFF, 0xE0};
  const uint8_t png[] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  const uint8_t gif[] = {'G', 'I', 'F', '8', '9', 'a'};
  const uint8_t svg[] = {'<', 's', 'v', 'g', ' '};
  EXPECT_EQ(image_format_sniff(jpeg, sizeof(jpeg)), ImageFormat::kJpeg);
  EXPECT_EQ(image_format_sniff(png, sizeof(png)), ImageFormat::kPng);
  EXPECT_EQ(image_format_sniff(png, 7), ImageFormat::kUnknown);
  EXPECT_EQ(image_format_sniff(gif, sizeof(gif)), ImageFormat::kGif);
  EXPECT_EQ(image_format_sniff(gif, 5), ImageFormat::kUnknown);
  EXPECT_EQ(image_format_sniff(svg, sizeof(svg)), ImageFormat::kUnknown);
  EXPECT_EQ(image_format_sniff(nullptr, 0), ImageFormat::kUnknown);
  EXPECT_EQ(image_format_from_path("a/B.JPEG"), ImageFormat::kJpeg);
  EXPECT_EQ(image_format_from_path("x.Png"), ImageFormat::kPng);
  EXPECT_EQ(image_format_from_path("x.gif"), ImageFormat::kGif);
  EXPECT_EQ(image_format_from_path("x.HEIC"), ImageFormat::kHeif);
  EXPECT_EQ(image_format_from_path("x.svg"), ImageFormat::kUnknown);
  EXPECT_STREQ(image_format_name(ImageFormat::kPng), "png");
}

TEST(CodecRoundTrip, PngIsLosslessForGrayRgbRgba) {
  for (int32_t c : {1, 3, 4}) {
    const ImageBuffer src = random_image(37, 21, c, 7 + c);
    const auto bytes = encode(src, ImageFormat::kPng);
    auto dec = image_decode(bytes.data(), bytes.size());
    ASSERT_TRUE(dec.is_ok()) << dec.status().to_string();
    EXPECT_EQ(dec->width, 37);
    EXPECT_EQ(dec->height, 21);
    EXPECT_EQ(dec->channels, c);
    EXPECT_EQ(dec->pixels, src.pixels) << c << " channels";
  }
}

TEST(CodecRoundTrip, JpegIsCloseForGrayAndRgb) {
  for (int32_t c : {1, 3}) {
    const ImageBuffer src = smooth_image(64, 48, c);
    EncodeOptions o;
    o.format = ImageFormat::kJpeg;
    o.jpeg_quality = 95;
    auto bytes = image_encode(src.view(), o);
    ASSERT_TRUE(bytes.is_ok());
    auto dec = image_decode(bytes->data(), bytes->size());
    ASSERT_TRUE(dec.is_ok()) << dec.status().to_string();
    ASSERT_EQ(dec->channels, c);
    // Lossy: quality 95 on a smooth gradient stays within a few levels (4:2:0 chroma for RGB).
    const test::ImageDiff d = test::image_diff(dec->view(), src.view(), 8.0);
    EXPECT_LE(d.max_abs, 8.0) << d.first;
    EXPECT_LT(d.mean_abs, 2.0);
  }
}

TEST(CodecDecode, ChannelConversionsMatchOpenCv) {
  const ImageBuffer rgb = random_image(19, 13, 3, 1);
  const ImageBuffer rgba = random_image(19, 13, 4, 2);
  const ImageBuffer gray = random_image(19, 13, 1, 3);
  // A PNG of `source` decoded as `channels` equals cv::cvtColor(source, code).
  const struct {
    const char* name;
    const ImageBuffer& source;
    int32_t channels;
    int code;
  } cases[] = {{"rgb to gray", rgb, 1, cv::COLOR_RGB2GRAY},  {"rgba to gray", rgba, 1, cv::COLOR_RGBA2GRAY},
               {"gray to rgb", gray, 3, cv::COLOR_GRAY2RGB}, {"rgba to rgb", rgba, 3, cv::COLOR_RGBA2RGB},
               {"rgb to rgba", rgb, 4, cv::COLOR_RGB2RGBA},  {"gray to rgba", gray, 4, cv::COLOR_GRAY2RGBA}};
  for (const auto& c : cases) {
    const auto png = encode(c.source, ImageFormat::kPng);
    auto decoded = image_decode(png.data(), png.size(), DecodeOptions{.channels = c.channels});
    ASSERT_TRUE(decoded.is_ok()) << c.name;
    ASSERT_EQ(decoded->channels, c.channels) << c.name;
    cv::Mat want;
    cv::cvtColor(test::cv_view(c.source.view()), want, c.code);
    EXPECT_EQ(test::image_diff(decoded->view(), test::kiln_view(want)).max_abs, 0.0) << c.name;
  }

  // A JPEG decodes as RGB; asking for gray converts it with the same weights.
  const auto jpg = encode(smooth_image(16, 16, 3), ImageFormat::kJpeg);
  auto rgb_dec = image_decode(jpg.data(), jpg.size());
  auto gray_dec = image_decode(jpg.data(), jpg.size(), DecodeOptions{.channels = 1});
  ASSERT_TRUE(rgb_dec.is_ok() && gray_dec.is_ok());
  cv::Mat cv_gray;
  cv::cvtColor(test::cv_view(rgb_dec->view()), cv_gray, cv::COLOR_RGB2GRAY);
  EXPECT_EQ(test::image_diff(gray_dec->view(), test::kiln_view(cv_gray)).max_abs, 0.0);
}

TEST(CodecDecode, CorruptBytesAreRejected) {
  const std::vector<uint8_t> garbage = {'h', 'e', 'l', 'l', 'o', 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto r = image_decode(garbage.data(), garbage.size());
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kUnsupportedFormat);
  auto empty = image_decode(nullptr, 0);
  EXPECT_EQ(empty.status().code(), Errc::kUnsupportedFormat);

  // Valid magic followed by noise; and valid files with their middle overwritten.
  std::mt19937 rng(5);
  for (ImageFormat f : {ImageFormat::kJpeg, ImageFormat::kPng}) {
    auto bytes = encode(random_image(32, 32, 3, 9), f);
    for (size_t i = bytes.size() / 3; i < bytes.size() / 3 + 64; ++i) bytes[i] = static_cast<uint8_t>(rng());
    auto dec = image_decode(bytes.data(), bytes.size());
    EXPECT_FALSE(dec.is_ok()) << image_format_name(f);
    std::vector<uint8_t> noise(200);
    for (auto& v : noise) v = static_cast<uint8_t>(rng());
    const auto head = encode(random_image(4, 4, 3, 1), f);
    std::copy(head.begin(), head.begin() + 8, noise.begin());
    EXPECT_FALSE(image_decode(noise.data(), noise.size()).is_ok()) << image_format_name(f);
  }
}

TEST(CodecDecode, TruncatedFilesGiveErrorsNotCrashes) {
  for (ImageFormat f : {ImageFormat::kJpeg, ImageFormat::kPng}) {
    const auto bytes = encode(random_image(40, 30, 3, 11), f);
    ASSERT_GT(bytes.size(), 100u);
    std::vector<size_t> cuts = {0, 1, 2, 3, 8, 16, 33, 50, 100, bytes.size() / 2, bytes.size() - 20,
                                bytes.size() - 12, bytes.size() - 2, bytes.size() - 1};
    for (size_t cut : cuts) {
      // A fresh copy of exactly `cut` bytes so ASan sees any read past the end.
      std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
      auto dec = image_decode(part.data(), part.size());
      EXPECT_FALSE(dec.is_ok()) << image_format_name(f) << " cut at " << cut << " of " << bytes.size();
      if (!dec.is_ok()) {
        EXPECT_EQ(dec.status().code(), Errc::kUnsupportedFormat);
      }
    }
  }
}

TEST(CodecDecode, PixelLimitRefusesBombsBeforeAllocating) {
  // 100000 x 100000 RGB would need 30 GB: refused after the header.
  const auto bomb = png_header_only(100000, 100000);
  auto r = image_decode(bomb.data(), bomb.size());
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kUnsupportedFormat);
  EXPECT_NE(r.status().message().find("limit"), std::string::npos) << r.status().message();

  // The limit is configurable: a real 40x30 image passes 1200 px and is refused at 1199.
  const auto png = encode(random_image(40, 30, 3, 1), ImageFormat::kPng);
  const auto jpg = encode(random_image(40, 30, 3, 1), ImageFormat::kJpeg);
  DecodeOptions o;
  o.max_pixels = 1200;
  EXPECT_TRUE(image_decode(png.data(), png.size(), o).is_ok());
  EXPECT_TRUE(image_decode(jpg.data(), jpg.size(), o).is_ok());
  o.max_pixels = 1199;
  EXPECT_EQ(image_decode(png.data(), png.size(), o).status().code(), Errc::kUnsupportedFormat);
  EXPECT_EQ(image_decode(jpg.data(), jpg.size(), o).status().code(), Errc::kUnsupportedFormat);

  // A JPEG whose SOF claims 60000 x 60000.
  auto big = jpg;
  bool patched = false;
  for (size_t i = 0; i + 8 < big.size(); ++i) {
    if (big[i] == 0xFF && (big[i + 1] == 0xC0 || big[i + 1] == 0xC2)) {
      big[i + 5] = 0xEA, big[i + 6] = 0x60, big[i + 7] = 0xEA, big[i + 8] = 0x60;
      patched = true;
      break;
    }
  }
  ASSERT_TRUE(patched);
  EXPECT_EQ(image_decode(big.data(), big.size()).status().code(), Errc::kUnsupportedFormat);
}

TEST(CodecDecode, BadOptionsAreInvalidArgument) {
  const auto png = encode(random_image(4, 4, 3, 1), ImageFormat::kPng);
  DecodeOptions o;
  o.channels = 2;
  EXPECT_EQ(image_decode(png.data(), png.size(), o).status().code(), Errc::kInvalidArgument);
  o.channels = 0;
  o.max_pixels = 0;
  EXPECT_EQ(image_decode(png.data(), png.size(), o).status().code(), Errc::kInvalidArgument);
  EXPECT_EQ(image_convert_channels(random_image(2, 2, 2, 1).view(), 3).status().code(), Errc::kInvalidArgument);
  EncodeOptions e;
  e.format = ImageFormat::kJpeg;
  e.jpeg_quality = 0;
  EXPECT_EQ(image_encode(random_image(4, 4, 3, 1).view(), e).status().code(), Errc::kInvalidArgument);
  e.format = ImageFormat::kPng;
  EXPECT_EQ(image_encode(random_image(4, 4, 2, 1).view(), e).status().code(), Errc::kInvalidArgument);
  ImageView f32 = random_image(4, 4, 1, 1).view();
  f32.type = PixelType::kF32;
  EXPECT_EQ(image_encode(f32, e).status().code(), Errc::kInvalidArgument);
}

TEST(CodecFiles, EncodeFileDecodeFileAndErrorsNameTheFile) {
  test::TempDir dir;
  const ImageBuffer src = random_image(12, 9, 4, 3);
  ASSERT_TRUE(image_encode_file(src.view(), dir.file("a.png")).is_ok());
  ASSERT_TRUE(image_encode_file(smooth_image(12, 9, 3).view(), dir.file("b.JPG")).is_ok());
  auto a = image_decode_file(dir.file("a.png"));
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  EXPECT_EQ(a->pixels, src.pixels);
  auto b = image_decode_file(dir.file("b.JPG"));
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(b->channels, 3);
  // No temporary files left behind.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) entries += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(entries, 2);

  EXPECT_EQ(image_encode_file(src.view(), dir.file("c.txt")).code(), Errc::kInvalidArgument);
  EXPECT_EQ(image_encode_file(src.view(), dir.file("c.gif")).code(), Errc::kUnsupportedFormat);  // read, not written
  auto missing = image_decode_file(dir.file("missing.png"));
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), Errc::kIoError);
  EXPECT_NE(missing.status().message().find("missing.png"), std::string::npos);

  test::write_text_file(dir.file("bad.jpg"), "not a jpeg at all");
  auto bad = image_decode_file(dir.file("bad.jpg"));
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), Errc::kUnsupportedFormat);
  EXPECT_EQ(bad.status().message().rfind(dir.file("bad.jpg"), 0), 0u) << bad.status().message();

  DecodeOptions small;
  small.max_file_bytes = 10;
  EXPECT_EQ(image_decode_file(dir.file("a.png"), small).status().code(), Errc::kIoError);
  EXPECT_EQ(image_decode_file(dir.path().string()).status().code(), Errc::kIoError);  // a folder
}

TEST(CodecBatch, OneBadFileDoesNotAffectTheOthers) {
  test::TempDir dir;
  std::vector<std::string> paths;
  std::vector<ImageBuffer> sources;
  for (int i = 0; i < 7; ++i) {
    sources.push_back(random_image(10 + i, 5 + 2 * i, i % 2 == 0 ? 3 : 1, 100 + i));
    paths.push_back(dir.file("img" + std::to_string(i) + ".png"));
    ASSERT_TRUE(image_encode_file(sources.back().view(), paths.back()).is_ok());
  }
  // Input 2 is truncated, input 5 does not exist.
  auto bytes = file_read_all(paths[2], kImageMaxFileBytes);
  ASSERT_TRUE(bytes.is_ok());
  write_bytes(paths[2], std::vector<uint8_t>(bytes->begin(), bytes->begin() + 40));
  fs::remove(paths[5]);

  ThreadPool pool(2);
  DecodedBatch serial = image_decode_files(paths);
  DecodedBatch threaded = image_decode_files(paths, {}, &pool);
  for (DecodedBatch* b : {&serial, &threaded}) {
    ASSERT_EQ(b->inputs(), 7);
    ASSERT_EQ(b->images.count(), 5);
    EXPECT_EQ(b->failed(), 2);
    EXPECT_EQ(b->status[2].code(), Errc::kUnsupportedFormat);
    EXPECT_NE(b->status[2].message().find("img2.png"), std::string::npos);
    EXPECT_EQ(b->status[5].code(), Errc::kIoError);
    EXPECT_EQ(b->index, (std::vector<int64_t>{0, 1, -1, 2, 3, -1, 4}));
    EXPECT_EQ(b->source, (std::vector<int64_t>{0, 1, 3, 4, 6}));
    for (int64_t k = 0; k < b->images.count(); ++k) {
      const ImageBuffer& src = sources[static_cast<size_t>(b->source[static_cast<size_t>(k)])];
      EXPECT_EQ(test::image_diff((*b).images[k], src.view()).max_abs, 0.0) << k;
      EXPECT_TRUE(b->status[static_cast<size_t>(b->source[static_cast<size_t>(k)])].is_ok());
    }
  }
  // Moving the batch keeps the views valid.
  DecodedBatch moved = std::move(threaded);
  EXPECT_EQ(test::image_diff(moved.images[4], sources[6].view()).max_abs, 0.0);

  // The same from memory, forced to gray.
  std::vector<std::vector<uint8_t>> blobs;
  for (const auto& s : sources) blobs.push_back(encode(s, ImageFormat::kPng));
  blobs[3].resize(10);
  std::vector<EncodedImage> inputs;
  for (const auto& blob : blobs) inputs.push_back({blob.data(), blob.size()});
  DecodeOptions gray;
  gray.channels = 1;
  DecodedBatch mem = image_decode_batch(inputs, gray, &pool);
  EXPECT_EQ(mem.images.count(), 6);
  EXPECT_EQ(mem.index[3], -1);
  for (int64_t k = 0; k < mem.images.count(); ++k) EXPECT_EQ(mem.images[k].channels, 1);
}

TEST(CodecDecode, JpegDecodesAtAReducedScaleThatKeepsTheMinimumSize) {
  const ImageBuffer source = smooth_image(200, 120, 3);
  const auto bytes = encode(source, ImageFormat::kJpeg);
  DecodeOptions full;
  auto whole = image_decode(bytes.data(), bytes.size(), full);
  ASSERT_TRUE(whole.is_ok());
  struct Case {
    int32_t min_w, min_h, want_w, want_h;
  };
  // 1/4 keeps 50 x 30, 1/2 keeps 100 x 60; asking for more than half keeps the full size.
  for (const Case c : {Case{50, 30, 50, 30}, Case{40, 10, 50, 30}, Case{51, 30, 100, 60}, Case{101, 60, 200, 120},
                       Case{0, 0, 200, 120}, Case{25, 15, 25, 15}}) {
    DecodeOptions options;
    options.min_width = c.min_w;
    options.min_height = c.min_h;
    auto scaled = image_decode(bytes.data(), bytes.size(), options);
    ASSERT_TRUE(scaled.is_ok()) << scaled.status().to_string();
    EXPECT_EQ(scaled.value().width, c.want_w) << c.min_w << "x" << c.min_h;
    EXPECT_EQ(scaled.value().height, c.want_h);
    // The DCT-scaled image is the full one averaged down, within JPEG's error.
    cv::Mat full_mat(whole.value().height, whole.value().width, CV_8UC3, whole.value().pixels.data());
    cv::Mat area;
    cv::resize(full_mat, area, cv::Size(c.want_w, c.want_h), 0, 0, cv::INTER_AREA);
    cv::Mat got(c.want_h, c.want_w, CV_8UC3, scaled.value().pixels.data());
    EXPECT_LT(cv::norm(area, got, cv::NORM_L1) / static_cast<double>(area.total() * 3), 3.0);
  }
  DecodeOptions bad;
  bad.min_width = -1;
  EXPECT_EQ(image_decode(bytes.data(), bytes.size(), bad).status().code(), Errc::kInvalidArgument);
  // PNGs ignore it.
  const auto png = encode(source, ImageFormat::kPng);
  DecodeOptions small;
  small.min_width = 10;
  small.min_height = 10;
  EXPECT_EQ(image_decode(png.data(), png.size(), small).value().width, 200);
}

}  // namespace
}  // namespace kiln

#else
TEST(Codec, SkippedWithoutJpeg) { GTEST_SKIP() << "built without libspng/libturbojpeg (KILN_JPEG=OFF)"; }
#endif
