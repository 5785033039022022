// Line charts: every CPU variant equals the per-pixel definition of render_px.h evaluated by brute force (the
// nearest point over all segments, no row bounds), byte for byte. The CPU loops narrow each segment's rows to the
// band around its line and skip segments per block; this checks that they never drop a segment that matters,
// on steep, flat, spiky and very dense windows.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "common/reference_render.h"
#include "common/render_helpers.h"
#include "core/cpu_isa.h"
#include "ops/render_px.h"

namespace kiln {
namespace {

// The brute-force definition for the pixels of `columns` (all columns when empty); other pixels are left 0.
std::vector<uint8_t> brute_force(const std::vector<float>& window, const RenderParams& p,
                                 const std::vector<int32_t>& columns = {}) {
  const auto n = static_cast<int32_t>(window.size());
  float vmin = window[0];
  float vmax = window[0];
  for (float v : window) {
    vmin = kiln_minf(vmin, v);
    vmax = kiln_maxf(vmax, v);
  }
  const float x_step = kiln_line_x_step(p.width, n);
  std::vector<KilnSegment> segments;
  for (int32_t k = 0; k + 1 < n; ++k) {
    segments.push_back(kiln_segment_make(kiln_point_x(k, x_step), kiln_point_y(window[k], vmin, vmax, p.height),
                                         kiln_point_x(k + 1, x_step),
                                         kiln_point_y(window[k + 1], vmin, vmax, p.height)));
  }
  const float r = 0.5f * p.line_width;
  std::vector<uint8_t> image(static_cast<size_t>(p.width) * p.height);
  std::vector<int32_t> xs = columns;
  for (int32_t x = 0; xs.size() < static_cast<size_t>(p.width) && columns.empty(); ++x) xs.push_back(x);
  for (int32_t y = 0; y < p.height; ++y) {
    for (int32_t x : xs) {
      KilnNearest nearest = kiln_nearest_none();
      for (const KilnSegment& g : segments) {
        const float ox = static_cast<float>(x) - g.ax;
        kiln_nearest_update(g, ox, ox * g.dx, static_cast<float>(y), &nearest);
      }
      const float coverage = kiln_nearest_coverage(nearest, r, r < KILN_LINE_REACH_PAD);
      image[static_cast<size_t>(y) * p.width + x] =
          kiln_level_to_u8(kiln_shade(coverage, static_cast<float>(p.background), static_cast<float>(p.ink)));
    }
  }
  return image;
}

struct DefinitionCase {
  const char* name;
  int32_t width, height;
  float line_width;
  std::vector<float> window;
};

std::vector<float> spiky(int32_t n) {
  auto walk = test::random_walk(n, 77, 1.0f);
  for (int32_t i = 3; i < n; i += 7) walk[i] += (i % 2 ? 40.0f : -40.0f);
  return walk;
}

class RenderDefinition : public ::testing::TestWithParam<DefinitionCase> {};

TEST_P(RenderDefinition, EveryVariantEqualsTheBruteForceDefinition) {
  const auto& c = GetParam();
  RenderParams p;
  p.width = c.width;
  p.height = c.height;
  p.line_width = c.line_width;
  const auto expected = brute_force(c.window, p);
  const CpuIsa saved = cpu_isa_active();
  for (CpuIsa isa : {CpuIsa::kScalar, CpuIsa::kGeneric, cpu_isa_best()}) {
    cpu_isa_set(isa);
    const auto image = test::render_window(c.window, p);
    int64_t differing = 0;
    for (size_t i = 0; i < image.size(); ++i) differing += image[i] != expected[i];
    EXPECT_EQ(differing, 0) << cpu_isa_name(isa);
  }
  cpu_isa_set(saved);
}

// A window so much longer than the image is wide that the CPU computes each segment's rows per column instead of
// keeping a table of them (more than 4M segment-column pairs); checked on four columns.
TEST(RenderDefinitionLong, RowsWithoutTheTable) {
  RenderParams p;
  p.width = 64;
  p.height = 48;
  p.line_width = 3.0f;
  const auto window = test::random_walk(800000, 8, 1.0f);  // ~6 columns per segment: > 4.8M pairs
  const std::vector<int32_t> columns = {0, 21, 42, 63};
  const auto expected = brute_force(window, p, columns);
  const CpuIsa saved = cpu_isa_active();
  for (CpuIsa isa : {CpuIsa::kScalar, cpu_isa_best()}) {
    cpu_isa_set(isa);
    const auto image = test::render_window(window, p);
    int64_t differing = 0;
    for (int32_t y = 0; y < p.height; ++y) {
      for (int32_t x : columns) {
        const size_t i = static_cast<size_t>(y) * p.width + x;
        differing += image[i] != expected[i];
      }
    }
    EXPECT_EQ(differing, 0) << cpu_isa_name(isa);
  }
  cpu_isa_set(saved);
}

INSTANTIATE_TEST_SUITE_P(Cases, RenderDefinition,
                         ::testing::Values(DefinitionCase{"walk_800x500", 800, 500, 3.0f,
                                                          test::random_walk(100, 5, 1.0f)},
                                           DefinitionCase{"walk_224", 224, 224, 2.0f, test::random_walk(100, 6, 1.0f)},
                                           DefinitionCase{"spikes_thin", 300, 200, 0.75f, spiky(120)},
                                           DefinitionCase{"spikes_wide", 300, 200, 9.0f, spiky(60)},
                                           DefinitionCase{"dense", 120, 400, 1.5f, spiky(2000)},
                                           DefinitionCase{"tall_narrow", 3, 2000, 3.0f, spiky(50)},
                                           DefinitionCase{"flat", 200, 51, 4.0f, std::vector<float>(30, 1.0f)},
                                           DefinitionCase{"one_column", 1, 300, 2.0f, spiky(20)}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kiln
