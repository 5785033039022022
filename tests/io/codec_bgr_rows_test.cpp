// BMP's BGR(X) rows to RGB: every SIMD path (AVX2: BGR 32 pixels, then 16; BGRX 8 pixels with stores that run past
// the step; AVX-512 VBMI: BGR 64 pixels, the rest by AVX2) gives the plain loop's bytes for every row length and
// any alignment of its input and output, and never writes past the row's end.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/cpu_isa.h"
#include "io/bgr_rows.h"

namespace kiln {
namespace {

// Every length from 0 to 300 pixels (the VBMI steps' 64, the AVX2 steps' 32 and 16, and every tail), with the row
// starting 0-3 bytes into its buffers.
void expect_the_loops_bytes(BgrRowToRgb path, const std::string& name) {
  constexpr uint8_t kGuard = 0xA5;
  for (const int32_t channels : {3, 4}) {
    for (int64_t count = 0; count <= 300; ++count) {
      for (const size_t shift : {size_t{0}, size_t{1}, size_t{3}}) {
        std::vector<uint8_t> in(static_cast<size_t>(count * channels) + shift);
        for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 37 + 11);
        std::vector<uint8_t> expected(static_cast<size_t>(count * 3) + shift + 64, kGuard);
        std::vector<uint8_t> got(expected.size(), kGuard);
        bgr_row_to_rgb_loop(in.data() + shift, channels, count, expected.data() + shift);
        path(in.data() + shift, channels, count, got.data() + shift);
        ASSERT_EQ(got, expected) << name << ": " << channels << " channels, " << count << " pixels, shift " << shift;
        if (count > 0) {
          EXPECT_EQ(got[shift], in[shift + 2]);
          EXPECT_EQ(got[shift + 2], in[shift]);
        }
      }
    }
  }
}

TEST(BgrRows, Avx2GivesTheLoopsBytesForEveryLengthAndStaysInsideTheRow) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "this CPU has no AVX2";
  expect_the_loops_bytes(bgr_row_to_rgb_avx2, "avx2");
}

TEST(BgrRows, Avx512VbmiGivesTheLoopsBytesForEveryLengthAndStaysInsideTheRow) {
  if (!bgr_rows_vbmi_supported()) GTEST_SKIP() << "this CPU has no AVX-512 VBMI";
  expect_the_loops_bytes(bgr_row_to_rgb_vbmi, "vbmi");
}

TEST(BgrRows, TheChosenPathFollowsTheActiveIsa) {
  const CpuIsa before = cpu_isa_active();
  cpu_isa_set(CpuIsa::kGeneric);
  EXPECT_EQ(bgr_row_to_rgb_chosen(), &bgr_row_to_rgb_loop);
  cpu_isa_set(before);
  if (cpu_isa_active() >= CpuIsa::kAvx2) {
    EXPECT_EQ(bgr_row_to_rgb_chosen(), bgr_rows_vbmi_supported() ? &bgr_row_to_rgb_vbmi : &bgr_row_to_rgb_avx2);
  }
  expect_the_loops_bytes(bgr_row_to_rgb_chosen(), "chosen");
}

}  // namespace
}  // namespace kiln
