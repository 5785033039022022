// Crc32 (carry-less multiplication for whole 16-byte blocks where the CPU has it) equals zlib's crc32 for any sizes,
// alignments and ways of splitting the stream into updates.
#include "io/crc32.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <vector>

namespace kiln {
namespace {

TEST(Crc32, EqualsZlibForAnySplit) {
  std::mt19937 rng(21);
  std::vector<uint8_t> data(200003);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  for (size_t size : {0, 1, 15, 16, 63, 64, 65, 79, 80, 127, 128, 1000, 4096, 65537, 199990}) {
    for (size_t offset : {0, 1, 7, 13}) {
      const uint8_t* p = data.data() + offset;
      const auto expected = static_cast<uint32_t>(crc32_z(0, p, size));
      Crc32 whole;
      whole.update(p, size);
      EXPECT_EQ(whole.value(), expected) << "size " << size << " offset " << offset;
      Crc32 pieces;  // random splits, some shorter than a block
      for (size_t at = 0; at < size;) {
        const size_t take = std::min<size_t>(size - at, rng() % 300);
        pieces.update(p + at, take);
        at += take;
      }
      EXPECT_EQ(pieces.value(), expected) << "split, size " << size << " offset " << offset;
    }
  }
}

}  // namespace
}  // namespace kiln
