// NPY v1.0 headers: numpy's layout (data 64-byte aligned unless a fixed size is asked for).
#include <gtest/gtest.h>

#include "io/npy_format.h"

namespace kiln {
namespace {

uint16_t header_len(const std::string& h) {
  return static_cast<uint16_t>(static_cast<uint8_t>(h[8]) | (static_cast<uint8_t>(h[9]) << 8));
}

TEST(NpyFormat, HeaderIsAlignedAndDescribesTheArray) {
  const std::string h = npy_header(PixelType::kU8, {7, 500, 800});
  ASSERT_EQ(h.size() % 64, 0u);
  EXPECT_EQ(h.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(h[6], 1);
  EXPECT_EQ(h[7], 0);
  EXPECT_EQ(header_len(h) + 10u, h.size());
  EXPECT_NE(h.find("{'descr': '|u1', 'fortran_order': False, 'shape': (7, 500, 800), }"), std::string::npos);
  EXPECT_EQ(h.back(), '\n');
}

TEST(NpyFormat, FixedSizeOneDimensionAndOverflow) {
  const std::string h = npy_header(PixelType::kF16, {3}, 256);
  EXPECT_EQ(h.size(), 256u);
  EXPECT_NE(h.find("'descr': '<f2'"), std::string::npos);
  EXPECT_NE(h.find("'shape': (3,)"), std::string::npos);
  EXPECT_NE(npy_header(PixelType::kF32, {1, 2}).find("'<f4'"), std::string::npos);
  EXPECT_TRUE(npy_header(PixelType::kF32, {1, 2, 3}, 32).empty());  // does not fit
}

}  // namespace
}  // namespace kiln
