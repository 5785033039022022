// Rendering shortcuts for tests: one window or many, on the CPU backend.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/device.h"
#include "kiln/ops/render.h"

namespace kiln {
class ThreadPool;
}

namespace kiln::test {

// Windows of an interleaved series (1 or 4 channels) that own their series and starts.
struct SeriesWindows {
  std::vector<float> series;
  std::vector<int64_t> starts;
  int32_t channels = 1;
  int32_t seq_len = 0;

  WindowBatch view() const {
    return WindowBatch{series.data(), channels, starts.data(), static_cast<int64_t>(starts.size()), seq_len};
  }
};

// The CPU render op on a window batch (validated like op_run does, then render_cpu); `pool` may be null.
Status render_cpu_windows(const RenderParams& params, const WindowBatch& windows, const BatchView& out,
                          ThreadPool* pool = nullptr);
// A render on `backend` the way op_run reaches it: validated (InvalidArgument before the backend sees anything),
// then run; `timings` receives the backend's device times.
Status render_on(Backend& backend, const RenderParams& params, const WindowBatch& windows, const BatchView& out,
                 OpTimings* timings = nullptr);
// What `backend` answers for a call of one window with these params (the call is not validated).
bool render_supported(const Backend& backend, const RenderParams& params, int32_t channels = 1);

// Renders one window (1 channel, or 4 interleaved OHLC channels) and returns the u8 image (H*W, or H*W*3 with
// params.color).
std::vector<uint8_t> render_window(const std::vector<float>& window, const RenderParams& params, int32_t channels = 1);

// Renders windows [starts] of `series` in batches of `batch_size` with `threads` threads (1 = no pool).
std::vector<uint8_t> render_series(const std::vector<float>& series, int32_t channels, const std::vector<int64_t>& starts,
                                   int32_t seq_len, const RenderParams& params, int64_t batch_size, int32_t threads);

// Ink coverage of a pixel from its level: (background - level) / (background - ink).
double coverage_of(uint8_t level, uint8_t background = 255, uint8_t ink = 0);

}  // namespace kiln::test
