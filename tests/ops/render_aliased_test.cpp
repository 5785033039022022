// The CPU's division-free aliased_rows against render_px.h's kiln_aliased_rows, which the GPU kernels use.
#include <gtest/gtest.h>

#include <random>

#include "ops/cpu/render_aliased.h"

namespace kiln {
namespace {

void expect_same_rows(int32_t x0, int32_t y0, int32_t x1, int32_t y1) {
  for (int32_t c = x0 - 1; c <= x1 + 1; ++c) {
    int32_t lo = 0, hi = 0, want_lo = 0, want_hi = 0;
    cpu::aliased_rows(c, x0, y0, x1, y1, &lo, &hi);
    kiln_aliased_rows(c, x0, y0, x1, y1, &want_lo, &want_hi);
    ASSERT_EQ(lo, want_lo) << x0 << "," << y0 << " -> " << x1 << "," << y1 << " column " << c;
    ASSERT_EQ(hi, want_hi) << x0 << "," << y0 << " -> " << x1 << "," << y1 << " column " << c;
  }
}

TEST(RenderAliased, EqualsTheKernelsRowsOnEverySmallSegment) {
  for (int32_t dx = 0; dx <= 24; ++dx) {
    for (int32_t dy = -60; dy <= 60; ++dy) expect_same_rows(5, 70, 5 + dx, 70 + dy);
  }
}

TEST(RenderAliased, EqualsTheKernelsRowsOnLongSegments) {
  std::mt19937 rng(55);
  std::uniform_int_distribution<int32_t> coordinate(0, 32767);
  std::uniform_int_distribution<int32_t> step(0, 4000);
  for (int32_t i = 0; i < 300; ++i) {
    const int32_t x0 = coordinate(rng) % 28000;
    const int32_t x1 = x0 + (i % 3 == 0 ? step(rng) % 8 : step(rng));
    expect_same_rows(x0, coordinate(rng), x1, coordinate(rng));
  }
  expect_same_rows(0, 0, 32767, 32767);
  expect_same_rows(0, 32767, 1, 0);
}

}  // namespace
}  // namespace kiln
