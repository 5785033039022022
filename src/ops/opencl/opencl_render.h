// The render op on OpenCL: per-thread queue state and the host side of one batch (upload, two launches, download).
// Kernels are in render.cl.
#pragma once

#include <memory>

#include "core/buffer_pool.h"
#include "kiln/device.h"
#include "kiln/ops.h"
#include "ops/opencl/opencl_runtime.h"

namespace kiln::opencl {

// What one calling thread renders with: an in-order queue with profiling, and its own kernel objects (kernel
// arguments are per cl_kernel, so kernels cannot be shared between threads).
struct RenderQueue {
  ClHandle<cl_command_queue> queue;
  ClHandle<cl_kernel> prepare_kernel;
  ClHandle<cl_kernel> line_kernel;
  ClHandle<cl_kernel> ohlc_kernel;
  size_t local_size = 1;  // work-items per group along the columns (fixed, so PoCL specializes the kernels once)
};

Result<std::unique_ptr<RenderQueue>> render_queue_create(const OpenclRuntime& runtime);

// Renders every window of the batch into `out` (validated by the caller, count > 0): uploads the series rows the
// batch spans and the window starts relative to them, launches render_prepare_kernel (per-window ranges and line
// segments) then the line or OHLC kernel over the whole batch, and reads the images back into `out` (non-blocking
// read, then waits). Device buffers come
// from `pool` and go back to it before returning. OutOfMemory when a buffer cannot be had, DeviceError otherwise.
Status render_opencl(RenderQueue& queue, BufferPool& pool, const OpenclDevice& device, const RenderParams& params,
                     const WindowBatch& windows, const BatchView& out, RenderTimings* timings);

}  // namespace kiln::opencl
