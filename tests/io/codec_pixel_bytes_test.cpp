// ImageBuffer's PixelBytes: a std::vector<uint8_t> in what it does (resize zero-fills, also over bytes it held
// before), and decode_buffer_grow appends bytes for a decoder to write without touching the ones before them.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "io/decode_memory.h"
#include "kiln/codec.h"

namespace kiln {
namespace {

TEST(PixelBytes, ResizeZeroFillsEvenOverBytesItHeldBefore) {
  PixelBytes bytes;
  uint8_t* grown = decode_buffer_grow(bytes, 1000);
  std::memset(grown, 0xAB, 1000);
  bytes.resize(10);
  bytes.resize(1000);  // within the capacity: over the 0xAB bytes past the 10 kept
  std::vector<uint8_t> want(1000, 0);
  std::memset(want.data(), 0xAB, 10);
  EXPECT_EQ(bytes, want);
  bytes.resize(2000, 7);
  EXPECT_EQ(bytes[999], 0);
  EXPECT_EQ(bytes[1000], 7);
  EXPECT_EQ(bytes[1999], 7);
}

TEST(PixelBytes, GrowAppendsWritableBytesAfterTheOnesItHas) {
  PixelBytes bytes = {1, 2, 3};
  decode_buffer_reserve(bytes, 4);  // room for one more only: the second growth moves the bytes
  for (const size_t add : {size_t{1}, size_t{500}}) {
    const size_t before = bytes.size();
    uint8_t* grown = decode_buffer_grow(bytes, add);
    ASSERT_EQ(bytes.size(), before + add);
    EXPECT_EQ(grown, bytes.data() + before);
    std::memset(grown, 9, add);
  }
  std::vector<uint8_t> want = {1, 2, 3};
  want.resize(504, 9);
  EXPECT_EQ(bytes, want);
  EXPECT_TRUE(want == bytes);
  EXPECT_NE(bytes, std::vector<uint8_t>(504, 9));
  EXPECT_EQ(decode_buffer_grow(bytes, 0), bytes.data() + bytes.size());
}

TEST(PixelBytes, AnImageBufferCopiesAndMovesItsPixels) {
  ImageBuffer image;
  image.pixels.assign({5, 6, 7});
  ImageBuffer copy = image;
  EXPECT_EQ(copy.pixels, image.pixels);
  EXPECT_NE(copy.pixels.data(), image.pixels.data());
  const uint8_t* storage = image.pixels.data();
  ImageBuffer moved = std::move(image);
  EXPECT_EQ(moved.pixels.data(), storage);
  EXPECT_EQ(moved.pixels, std::vector<uint8_t>({5, 6, 7}));
}

}  // namespace
}  // namespace kiln
