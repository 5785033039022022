// The largest-region filter: the largest region above the threshold keeps its values and its soft edge; a smaller
// region and its edge become 0; a map with no region becomes all background.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "apps/segment/mask_region.h"

namespace kiln {
namespace {

constexpr int32_t kW = 64, kH = 48;

// A disc of 0.9 with a one-pixel ring of 0.3 around it.
void disc(std::vector<float>* map, float cx, float cy, float r) {
  for (int32_t y = 0; y < kH; ++y) {
    for (int32_t x = 0; x < kW; ++x) {
      const float d = std::hypot(x - cx, y - cy);
      float& v = (*map)[static_cast<size_t>(y) * kW + x];
      if (d <= r) v = 0.9f;
      else if (d <= r + 1.5f) v = std::max(v, 0.3f);
    }
  }
}

TEST(MaskRegion, KeepsTheLargestRegionWithItsEdge) {
  std::vector<float> map(kW * kH, 0.01f);
  disc(&map, 20, 24, 10);  // the person
  disc(&map, 54, 8, 3);    // a small region far away
  std::vector<float> kept = map;
  std::vector<uint8_t> scratch;
  mask_keep_largest_region(kept.data(), kW, kH, 0.5f, 2, &scratch);
  int32_t edge_kept = 0;
  for (int32_t y = 0; y < kH; ++y) {
    for (int32_t x = 0; x < kW; ++x) {
      const size_t i = static_cast<size_t>(y) * kW + x;
      const float d_person = std::hypot(x - 20.0f, y - 24.0f);
      if (d_person <= 12.0f) {
        EXPECT_EQ(kept[i], map[i]) << x << "," << y;  // the region and its soft edge, unchanged
        edge_kept += map[i] == 0.3f;
      } else if (std::hypot(x - 54.0f, y - 8.0f) <= 5.0f) {
        EXPECT_EQ(kept[i], 0.0f) << x << "," << y;  // the small region and its edge
      } else if (d_person > 14.0f) {
        EXPECT_EQ(kept[i], 0.0f) << x << "," << y;  // far background
      }
    }
  }
  EXPECT_GT(edge_kept, 40);
}

TEST(MaskRegion, NoRegionIsAllBackground) {
  std::vector<float> map(kW * kH, 0.3f);
  std::vector<uint8_t> scratch;
  mask_keep_largest_region(map.data(), kW, kH, 0.5f, 2, &scratch);
  for (const float v : map) EXPECT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace kiln
