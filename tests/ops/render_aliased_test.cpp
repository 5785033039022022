// The CPU's moving-average segments against render_px.h's kiln_aliased_rows, which the GPU kernels use per column.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "ops/cpu/render_aliased.h"

namespace kiln {
namespace {

// The segment drawn at once against the kernels' rows column by column, on a 1-byte canvas.
void expect_same_segment(int32_t x0, int32_t y0, int32_t x1, int32_t y1) {
  const int32_t w = x1 + 2;
  const int32_t h = std::max(y0, y1) + 2;
  std::vector<uint8_t> drawn(static_cast<size_t>(w) * h, 0);
  std::vector<uint8_t> want(drawn.size(), 0);
  cpu::aliased_segment_draw<uint8_t>(x0, y0, x1, y1, drawn.data(), w, 255);
  for (int32_t c = x0; c <= x1; ++c) {
    int32_t lo = 0, hi = -1;
    kiln_aliased_rows(c, x0, y0, x1, y1, &lo, &hi);
    for (int32_t y = lo; y <= hi; ++y) want[static_cast<size_t>(y) * w + c] = 255;
  }
  ASSERT_EQ(drawn, want) << x0 << "," << y0 << " -> " << x1 << "," << y1;
}

TEST(RenderAliased, SegmentsDrawnAtOnceEqualTheKernelsColumns) {
  for (int32_t dx = 0; dx <= 24; ++dx) {
    for (int32_t dy = -60; dy <= 60; ++dy) expect_same_segment(3, 70, 3 + dx, 70 + dy);
  }
  std::mt19937 rng(56);
  std::uniform_int_distribution<int32_t> coordinate(0, 2000);
  for (int32_t i = 0; i < 200; ++i) {
    const int32_t x0 = coordinate(rng);
    expect_same_segment(x0, coordinate(rng), x0 + coordinate(rng) % (i % 2 == 0 ? 9 : 2000), coordinate(rng));
  }
  expect_same_segment(0, 30000, 3, 0);  // steep over a tall image, to row 0
  expect_same_segment(0, 0, 7, 30001);
}

}  // namespace
}  // namespace kiln
