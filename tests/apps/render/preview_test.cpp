#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "apps/render/preview.h"

#if KILN_HAS_JPEG
#include "io/png_codec.h"

namespace kiln {
namespace {

ImageView view_u8(std::vector<uint8_t>& pixels, int32_t width, int32_t height) {
  ImageView v;
  v.data = pixels.data();
  v.width = width;
  v.height = height;
  v.row_stride = width;
  v.type = PixelType::kU8;
  return v;
}

DecodedImage read_png(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto decoded = png_decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  EXPECT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  return decoded.is_ok() ? decoded.value() : DecodedImage();
}

TEST(Preview, TilesU8ImagesWithGutter) {
  // Five 4x3 images, each a constant value, in 3 columns: 2 rows, the last cell empty.
  std::vector<std::vector<uint8_t>> storage;
  for (int i = 0; i < 5; ++i) storage.emplace_back(12, static_cast<uint8_t>(10 + i * 40));
  std::vector<ImageView> images;
  for (auto& s : storage) images.push_back(view_u8(s, 4, 3));
  test::TempDir tmp;
  const std::string path = tmp.file("grid.png");
  ASSERT_TRUE(preview_write_png(path, images, 3).is_ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  const DecodedImage grid = read_png(path);
  ASSERT_EQ(grid.width, 3 * 4 + 2 * kPreviewGutter);
  ASSERT_EQ(grid.height, 2 * 3 + kPreviewGutter);
  ASSERT_EQ(grid.channels, 1);
  auto at = [&](int x, int y) { return static_cast<int>(grid.pixels[static_cast<size_t>(y * grid.width + x)]); };
  for (int i = 0; i < 5; ++i) {
    const int x0 = (i % 3) * (4 + kPreviewGutter);
    const int y0 = (i / 3) * (3 + kPreviewGutter);
    EXPECT_EQ(at(x0, y0), 10 + i * 40) << "tile " << i;
    EXPECT_EQ(at(x0 + 3, y0 + 2), 10 + i * 40) << "tile " << i;
  }
  EXPECT_EQ(at(4, 0), kPreviewGutterGray);   // vertical gutter
  EXPECT_EQ(at(5, 1), kPreviewGutterGray);
  EXPECT_EQ(at(0, 3), kPreviewGutterGray);   // horizontal gutter
  EXPECT_EQ(at(0, 4), kPreviewGutterGray);
  EXPECT_EQ(at(12, 5), kPreviewGutterGray);  // empty sixth cell
  EXPECT_EQ(at(15, 7), kPreviewGutterGray);
}

TEST(Preview, ScalesFloatImagesAndPicksColumns) {
  std::vector<float> pixels = {0.0f, 0.5f, 1.0f, 1.7f, -0.3f, 0.25f};
  ImageView v;
  v.data = pixels.data();
  v.width = 3;
  v.height = 2;
  v.row_stride = 3 * sizeof(float);
  v.type = PixelType::kF32;
  test::TempDir tmp;
  const std::string path = tmp.file("f32.png");
  // 4 images, columns <= 0: a 2x2 grid.
  ASSERT_TRUE(preview_write_png(path, {v, v, v, v}, 0).is_ok());
  const DecodedImage grid = read_png(path);
  ASSERT_EQ(grid.width, 2 * 3 + kPreviewGutter);
  ASSERT_EQ(grid.height, 2 * 2 + kPreviewGutter);
  const std::vector<int> expected = {0, 128, 255, 255, 0, 64};  // x255, rounded, clamped
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x)
      EXPECT_EQ(grid.pixels[static_cast<size_t>(y * grid.width + x)], expected[static_cast<size_t>(y * 3 + x)]);
}

TEST(Preview, CaptionsSitInALightStripUnderEachImage) {
  // Two white 120 x 40 images captioned, in 2 columns: an RGB picture, each cell 40 rows of image and a strip of
  // kPreviewCaptionGray under it with the caption's dark text in it, and nothing of the text on the image.
  std::vector<uint8_t> white(120 * 40, 255);
  const ImageView v = view_u8(white, 120, 40);
  test::TempDir tmp;
  const std::string path = tmp.file("captioned.png");
  ASSERT_TRUE(preview_write_png(path, {v, v}, 2, {"window 0 of 9", "window 8 of 9"}).is_ok());
  const DecodedImage grid = read_png(path);
  ASSERT_EQ(grid.channels, 3);
  ASSERT_EQ(grid.width, 2 * 120 + kPreviewGutter);
  ASSERT_GT(grid.height, 40 + 8);  // a strip of text under the images
  const auto red = [&](int x, int y) {
    return static_cast<int>(grid.pixels[static_cast<size_t>((y * grid.width + x) * 3)]);
  };
  for (const int x0 : {0, 120 + kPreviewGutter}) {
    int dark = 0;
    for (int y = 40; y < grid.height; ++y)
      for (int x = x0; x < x0 + 120; ++x) dark += red(x, y) < 100 ? 1 : 0;
    EXPECT_GT(dark, 20) << "cell at x " << x0;  // the caption's strokes
    EXPECT_EQ(red(x0 + 119, grid.height - 1), kPreviewCaptionGray);  // the strip past the text
    for (int y = 0; y < 40; ++y)
      for (int x = x0; x < x0 + 120; ++x) ASSERT_EQ(red(x, y), 255) << x << "," << y;
  }
  EXPECT_EQ(preview_write_png(tmp.file("c.png"), {v, v}, 2, {"one caption"}).code(), Errc::kInvalidArgument);
}

TEST(PreviewSample, SpreadsEvenlyFromTheFirstToTheLast) {
  const std::vector<int64_t> picked = preview_sample(10000, 16);
  ASSERT_EQ(picked.size(), 16u);
  EXPECT_EQ(picked.front(), 0);
  EXPECT_EQ(picked.back(), 9999);
  for (size_t k = 1; k < picked.size(); ++k) {
    const int64_t gap = picked[k] - picked[k - 1];
    EXPECT_TRUE(gap == 666 || gap == 667) << "gap " << gap << " before " << picked[k];  // 9999 / 15 = 666.6
  }
  EXPECT_EQ(preview_sample(17, 16).back(), 16);
  EXPECT_EQ(preview_sample(5, 16), (std::vector<int64_t>{0, 1, 2, 3, 4}));  // fewer images than asked: all
  EXPECT_EQ(preview_sample(100, 2), (std::vector<int64_t>{0, 99}));
  EXPECT_EQ(preview_sample(100, 1), (std::vector<int64_t>{0}));
  EXPECT_TRUE(preview_sample(0, 16).empty());
  EXPECT_TRUE(preview_sample(100, 0).empty());
}

// Colour charts (--color) preview in colour: each tile's pixels as they are, the gutter gray in every channel.
TEST(Preview, TilesRgbImages) {
  std::vector<uint8_t> first(2 * 2 * 3);
  std::vector<uint8_t> second(2 * 2 * 3);
  for (size_t i = 0; i < first.size(); i += 3) {
    first[i] = 200, first[i + 1] = 10, first[i + 2] = 30;
    second[i] = 5, second[i + 1] = 120, second[i + 2] = 250;
  }
  ImageView a = view_u8(first, 2, 2);
  ImageView b = view_u8(second, 2, 2);
  a.channels = b.channels = 3;
  a.row_stride = b.row_stride = 6;
  test::TempDir tmp;
  ASSERT_TRUE(preview_write_png(tmp.file("rgb.png"), {a, b}, 2).is_ok());
  const DecodedImage grid = read_png(tmp.file("rgb.png"));
  ASSERT_EQ(grid.channels, 3);
  ASSERT_EQ(grid.width, 4 + kPreviewGutter);
  auto at = [&](int x, int c) { return static_cast<int>(grid.pixels[static_cast<size_t>(x * 3 + c)]); };
  EXPECT_EQ(std::vector<int>({at(1, 0), at(1, 1), at(1, 2)}), std::vector<int>({200, 10, 30}));
  EXPECT_EQ(std::vector<int>({at(2, 0), at(2, 1), at(2, 2)}),
            std::vector<int>({kPreviewGutterGray, kPreviewGutterGray, kPreviewGutterGray}));
  EXPECT_EQ(std::vector<int>({at(2 + kPreviewGutter, 0), at(2 + kPreviewGutter, 2)}), std::vector<int>({5, 250}));
}

TEST(Preview, RejectsBadInput) {
  test::TempDir tmp;
  EXPECT_EQ(preview_write_png(tmp.file("a.png"), {}, 2).code(), Errc::kInvalidArgument);
  std::vector<uint8_t> rgba(36);
  ImageView v = view_u8(rgba, 3, 3);
  v.channels = 4;
  v.row_stride = 12;
  EXPECT_EQ(preview_write_png(tmp.file("b.png"), {v}, 1).code(), Errc::kInvalidArgument);
  std::vector<uint8_t> gray(9);
  v.channels = 3;  // gray and RGB tiles do not mix
  EXPECT_EQ(preview_write_png(tmp.file("c.png"), {v, view_u8(gray, 3, 3)}, 2).code(), Errc::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(tmp.file("a.png")));
  EXPECT_FALSE(std::filesystem::exists(tmp.file("c.png")));
}

}  // namespace
}  // namespace kiln

#else
TEST(Preview, UnsupportedWithoutLibspng) {
  std::vector<uint8_t> pixels(4);
  kiln::ImageView v;
  v.data = pixels.data();
  v.width = 2;
  v.height = 2;
  v.row_stride = 2;
  EXPECT_EQ(kiln::preview_write_png("/tmp/kiln_preview_unused.png", {v}, 1).code(), kiln::Errc::kUnsupportedFormat);
}
#endif
