// Chart rendering on CUDA (line and OHLC), around the per-pixel math of ops/render_px.h.
// Host-callable declarations only; the kernels live in render.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kiln/ops/render.h"
#include "kiln/status.h"

namespace kiln {

// A window batch in device memory. Window i is rows [starts[i], starts[i] + seq_len) of `series`.
struct DeviceWindows {
  const float* series = nullptr;    // `channels` interleaved floats per row
  const int64_t* starts = nullptr;  // first row of each window in `series`
  int64_t count = 0;
  int32_t channels = 1;
  int32_t seq_len = 0;
  void* scratch = nullptr;  // render_scratch_bytes() bytes of device memory for per-window data (256-aligned)
};

// Device scratch that launch_render needs for a batch: each window's value range plus its segments (line) or
// bar rows (OHLC).
size_t render_scratch_bytes(const RenderParams& params, int64_t count, int32_t seq_len);

// Enqueues the render of every window on `stream` into `d_out` (count packed images of width*height pixels of
// params.dtype): a setup kernel (one block per window) and one render kernel for the whole batch.
// Arguments must have passed render_validate(). DeviceError when a launch fails.
Status launch_render(const RenderParams& params, const DeviceWindows& windows, void* d_out, cudaStream_t stream);

// OK when the render kernels have an image the current device can load (checked once at backend creation).
Status render_kernels_check();

}  // namespace kiln
