// BMP's BGR(X) rows to RGB: the AVX2 steps (BGR: 32 pixels, then 16; BGRX: 8 pixels with stores that run past the
// step) give the plain loop's bytes for every row length, and never write past the row's end.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "io/bgr_rows.h"

namespace kiln {
namespace {

TEST(BgrRows, Avx2GivesTheLoopsBytesForEveryLengthAndStaysInsideTheRow) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "this CPU has no AVX2";
  for (const int32_t channels : {3, 4}) {
    for (int64_t count = 0; count <= 100; ++count) {
      std::vector<uint8_t> in(static_cast<size_t>(count * channels));
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 37 + 11);
      constexpr uint8_t kGuard = 0xA5;
      std::vector<uint8_t> expected(static_cast<size_t>(count * 3) + 32, kGuard);
      std::vector<uint8_t> got(expected.size(), kGuard);
      bgr_row_to_rgb_loop(in.data(), channels, count, expected.data());
      bgr_row_to_rgb_avx2(in.data(), channels, count, got.data());
      EXPECT_EQ(got, expected) << channels << " channels, " << count << " pixels";
      if (count > 0) {
        EXPECT_EQ(got[0], in[2]);
        EXPECT_EQ(got[2], in[0]);
      }
    }
  }
}

}  // namespace
}  // namespace kiln
