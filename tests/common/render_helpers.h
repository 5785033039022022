// Rendering shortcuts for tests: one window or many, on the CPU backend.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ops.h"

namespace kiln::test {

// Renders one window (1 channel, or 4 interleaved OHLC channels) and returns the u8 image (H*W).
std::vector<uint8_t> render_window(const std::vector<float>& window, const RenderParams& params, int32_t channels = 1);

// Renders windows [starts] of `series` in batches of `batch_size` with `threads` threads (1 = no pool).
std::vector<uint8_t> render_series(const std::vector<float>& series, int32_t channels, const std::vector<int64_t>& starts,
                                   int32_t seq_len, const RenderParams& params, int64_t batch_size, int32_t threads);

// Ink coverage of a pixel from its level: (background - level) / (background - ink).
double coverage_of(uint8_t level, uint8_t background = 255, uint8_t ink = 0);

}  // namespace kiln::test
