// Independent test references for the chart renderer: straightforward double-precision code that shares nothing
// with src/ops/render_px.h.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::test {

// Ink coverage per pixel (row-major H*W, in [0,1]) of a polyline of width `line_width` with round joins and caps,
// estimated with `samples` x `samples` points per pixel. Points follow kiln's convention:
// x_i = i*(W-1)/(n-1), y_i = (1 - (v-min)/(max-min))*(H-1), flat windows on (H-1)/2.
std::vector<double> reference_line_coverage(const std::vector<float>& window, int32_t width, int32_t height,
                                            double line_width, int32_t samples = 16);

// Expected gray level for a coverage: background + (ink - background) * coverage, rounded.
uint8_t reference_level(double coverage, uint8_t background = 255, uint8_t ink = 0);

// Deterministic random walk of n values (test input).
std::vector<float> random_walk(int64_t n, uint64_t seed, float step = 1.0f);

}  // namespace kiln::test
