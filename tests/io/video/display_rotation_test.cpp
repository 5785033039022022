// Turning a decoded frame as its display matrix asks: each quarter turn against the picture drawn by hand.
#include <gtest/gtest.h>

#include "io/video/display_rotation.h"

namespace kiln {
namespace {

// A 3 x 2 frame whose pixel (x, y) is (10 y + x, 0, 0) in its red channel.
ImageBuffer numbered(int32_t width, int32_t height) {
  ImageBuffer image;
  image.width = width;
  image.height = height;
  image.channels = 3;
  image.pixels.assign(static_cast<size_t>(width) * height * 3, 0);
  for (int32_t y = 0; y < height; ++y) {
    for (int32_t x = 0; x < width; ++x) image.pixels[(static_cast<size_t>(y) * width + x) * 3] = static_cast<uint8_t>(10 * y + x);
  }
  return image;
}

std::vector<int> reds(const ImageBuffer& image) {
  std::vector<int> out;
  for (size_t i = 0; i < image.pixels.size(); i += 3) out.push_back(image.pixels[i]);
  return out;
}

TEST(DisplayRotation, EachQuarterTurnPutsEveryPixelWhereItIsSeen) {
  // Coded:   0  1  2
  //         10 11 12
  const ImageBuffer coded = numbered(3, 2);
  ImageBuffer turned;
  rgb_turn(coded, 90, &turned);  // clockwise: the left column becomes the top row, read bottom up
  EXPECT_EQ(turned.width, 2);
  EXPECT_EQ(turned.height, 3);
  EXPECT_EQ(reds(turned), (std::vector<int>{10, 0, 11, 1, 12, 2}));
  rgb_turn(coded, 180, &turned);
  EXPECT_EQ(turned.width, 3);
  EXPECT_EQ(reds(turned), (std::vector<int>{12, 11, 10, 2, 1, 0}));
  rgb_turn(coded, 270, &turned);
  EXPECT_EQ(turned.height, 3);
  EXPECT_EQ(reds(turned), (std::vector<int>{2, 12, 1, 11, 0, 10}));
}

}  // namespace
}  // namespace kiln
