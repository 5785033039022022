// The render op's case list for backend parity: every GPU backend must reproduce the CPU reference (scalar, no
// SIMD) on each case, byte for byte unless the case states a tolerance and why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ops/render.h"

namespace kiln::test {

enum class SeriesShape : uint8_t { kRandomWalk, kFlat, kSpikes, kSteps, kWithNaN };

struct RenderCase {
  std::string name;
  RenderParams params;
  int32_t seq_len = 100;
  int32_t windows = 8;
  int32_t stride = 1;
  SeriesShape shape = SeriesShape::kRandomWalk;
  uint64_t seed = 1;
  int32_t max_abs_diff = 0;  // gray levels (u8) or levels*255 (f32); 0 = byte-identical
  std::vector<int32_t> averages;  // moving-average window lengths (params.moving_averages = their count)
  bool nan_volume = false;        // one volume value NaN (with params.volume): the windows holding it are blank
};

std::vector<RenderCase> render_cases();

// Interleaved series (1 or 4 price channels, then the volume and moving averages the params draw) long enough for
// the case's windows.
std::vector<float> render_case_series(const RenderCase& c);

}  // namespace kiln::test
