#include "ops/opencl/opencl_render.h"

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "core/fault.h"
#include "ops/opencl/opencl_buffers.h"
#include "ops/render_px.h"

namespace kiln::opencl {

namespace {

constexpr size_t kLocalColumns = 64;  // work-items per group along dimension 0 (columns; segments of a window)


Result<ClHandle<cl_kernel>> kernel_create(const OpenclRuntime& runtime, const char* name) {
  cl_int err = CL_SUCCESS;
  ClHandle<cl_kernel> kernel(clCreateKernel(runtime.program.get(), name, &err));
  if (err != CL_SUCCESS) return opencl_status(err, std::string("clCreateKernel(") + name + ")");
  return kernel;
}

double event_ms(cl_event event) {
  cl_ulong start = 0;
  cl_ulong end = 0;
  if (event == nullptr ||
      clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr) != CL_SUCCESS ||
      clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr) != CL_SUCCESS ||
      end < start) {
    return 0.0;
  }
  return static_cast<double>(end - start) * 1e-6;
}

Status launch_check() {
  if (fault_should_fail(FaultSite::kLaunch)) {
    return Status(Errc::kDeviceError, "opencl: injected kernel launch failure (KILN_FAULT)");
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<RenderQueue>> render_queue_create(const OpenclRuntime& runtime) {
  auto state = std::make_unique<RenderQueue>();
  cl_int err = CL_SUCCESS;
  state->queue.reset(
      clCreateCommandQueue(runtime.context.get(), runtime.device.device, CL_QUEUE_PROFILING_ENABLE, &err));
  if (err != CL_SUCCESS) return opencl_status(err, "clCreateCommandQueue");
  KILN_TRY_ASSIGN(state->prepare_kernel, kernel_create(runtime, "render_prepare_kernel"));
  KILN_TRY_ASSIGN(state->line_kernel, kernel_create(runtime, "render_line_kernel"));
  KILN_TRY_ASSIGN(state->ohlc_kernel, kernel_create(runtime, "render_ohlc_kernel"));
  size_t local = kLocalColumns;
  for (cl_kernel kernel : {state->prepare_kernel.get(), state->line_kernel.get(), state->ohlc_kernel.get()}) {
    size_t limit = 0;
    KILN_CL_CHECK(clGetKernelWorkGroupInfo(kernel, runtime.device.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(limit),
                                           &limit, nullptr));
    local = std::min(local, std::max<size_t>(limit, 1));
  }
  state->local_size = local;
  return state;
}

Status render_opencl(RenderQueue& queue, BufferPool& pool, const OpenclDevice& device, const RenderParams& params,
                     const WindowBatch& windows, const BatchView& out, RenderTimings* timings) {
  constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
  const int64_t count = windows.count;
  const int32_t channels = windows.channels;
  const int32_t seq_len = windows.seq_len;
  const int32_t width = params.width;
  const int32_t height = params.height;
  if (count > kMaxInt) return invalid_argument("opencl: more than 2^31 windows in one batch");

  // The rows the batch spans, and the starts relative to them.
  const auto [first, last] = std::minmax_element(windows.starts, windows.starts + count);
  const int64_t row_lo = *first;
  const int64_t rows = *last + seq_len - row_lo;
  std::vector<int64_t> starts(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) starts[static_cast<size_t>(i)] = windows.starts[i] - row_lo;

  const size_t series_bytes = static_cast<size_t>(rows) * static_cast<size_t>(channels) * sizeof(float);
  const size_t starts_bytes = starts.size() * sizeof(int64_t);
  const size_t ranges_bytes = static_cast<size_t>(count) * 4 * sizeof(float);
  const bool ohlc = params.style == ChartStyle::kOhlc;
  const size_t segment_bytes =
      ohlc ? 0 : static_cast<size_t>(count) * static_cast<size_t>(seq_len - 1) * sizeof(KilnSegment);
  const size_t image_bytes = out.image_bytes();
  const size_t out_bytes = image_bytes * static_cast<size_t>(count);

  cl_command_queue q = queue.queue.get();
  CallBuffers buffers(pool, device, q);
  // The output first: it is the large one, and the one a memory limit stops.
  KILN_TRY_ASSIGN(cl_mem out_mem, buffers.acquire(out_bytes, "the output images"));
  KILN_TRY_ASSIGN(cl_mem series_mem, buffers.acquire(series_bytes, "the series rows"));
  KILN_TRY_ASSIGN(cl_mem starts_mem, buffers.acquire(starts_bytes, "the window starts"));
  KILN_TRY_ASSIGN(cl_mem ranges_mem, buffers.acquire(ranges_bytes, "the window ranges"));
  cl_mem segments_mem = nullptr;  // line charts only
  if (!ohlc) {
    KILN_TRY_ASSIGN(segments_mem, buffers.acquire(segment_bytes, "the line segments"));
  }

  std::array<ClHandle<cl_event>, 2> upload;
  ClHandle<cl_event> prepare_done;
  ClHandle<cl_event> render_done;
  ClHandle<cl_event> download;
  buffers.set_pending(true);
  KILN_CL_CHECK(clEnqueueWriteBuffer(q, series_mem, CL_FALSE, 0, series_bytes, windows.series + row_lo * channels, 0,
                                     nullptr, upload[0].out()));
  KILN_CL_CHECK(
      clEnqueueWriteBuffer(q, starts_mem, CL_FALSE, 0, starts_bytes, starts.data(), 0, nullptr, upload[1].out()));

  // Per window (one work-group each): min/max/finiteness, over the close lane for line charts and all four lanes
  // for OHLC, then the line segments.
  const cl_int lane = !ohlc && channels == 4 ? 3 : 0;
  const cl_int lanes = ohlc ? 4 : 1;
  const size_t local = queue.local_size;
  {
    cl_kernel kernel = queue.prepare_kernel.get();
    KILN_CL_CHECK(kernel_args_set(kernel, series_mem, starts_mem, cl_int{seq_len}, cl_int{channels}, lane, lanes,
                                  cl_int{width}, cl_int{height}, ranges_mem, segments_mem));
    const size_t global = static_cast<size_t>(count) * local;
    KILN_TRY(launch_check());
    KILN_CL_CHECK(clEnqueueNDRangeKernel(q, kernel, 1, nullptr, &global, &local, 0, nullptr, prepare_done.out()));
  }

  // The whole batch in one launch: (columns, row tiles, windows).
  {
    const cl_int as_float = params.dtype == PixelType::kF32 ? 1 : 0;
    const cl_float background = static_cast<float>(params.background);
    cl_kernel kernel = nullptr;
    if (ohlc) {
      kernel = queue.ohlc_kernel.get();
      KILN_CL_CHECK(kernel_args_set(kernel, series_mem, starts_mem, ranges_mem, cl_int{seq_len}, cl_int{width},
                                    cl_int{height}, background, static_cast<cl_float>(params.ink_bullish),
                                    static_cast<cl_float>(params.ink_bearish), as_float, out_mem));
    } else {
      kernel = queue.line_kernel.get();
      KILN_CL_CHECK(kernel_args_set(kernel, ranges_mem, segments_mem, cl_int{seq_len}, cl_int{width}, cl_int{height},
                                    cl_float{params.line_width}, background, static_cast<cl_float>(params.ink),
                                    as_float, out_mem));
    }
    // One group per (column block, row tile, window), flattened into one dimension (see kiln_tile_locate()).
    const size_t column_blocks = (static_cast<size_t>(width) + local - 1) / local;
    const size_t tiles = (static_cast<size_t>(height) + kTileRows - 1) / kTileRows;
    const size_t global = column_blocks * tiles * static_cast<size_t>(count) * local;
    KILN_TRY(launch_check());
    KILN_CL_CHECK(clEnqueueNDRangeKernel(q, kernel, 1, nullptr, &global, &local, 0, nullptr, render_done.out()));
  }

  // Straight into `out`: one read when its images are packed, else one rectangle (a row per image).
  if (out.image_stride == static_cast<int64_t>(image_bytes)) {
    KILN_CL_CHECK(clEnqueueReadBuffer(q, out_mem, CL_FALSE, 0, out_bytes, out.data, 0, nullptr, download.out()));
  } else {
    const size_t origin[3] = {0, 0, 0};
    const size_t region[3] = {image_bytes, static_cast<size_t>(count), 1};
    KILN_CL_CHECK(clEnqueueReadBufferRect(q, out_mem, CL_FALSE, origin, origin, region, image_bytes, 0,
                                          static_cast<size_t>(out.image_stride), 0, out.data, 0, nullptr,
                                          download.out()));
  }
  cl_event wait = download.get();
  KILN_CL_CHECK(clWaitForEvents(1, &wait));
  KILN_CL_CHECK(clFinish(q));
  buffers.set_pending(false);

  if (timings != nullptr) {
    timings->upload_ms = event_ms(upload[0].get()) + event_ms(upload[1].get());
    timings->kernel_ms = event_ms(prepare_done.get()) + event_ms(render_done.get());
    timings->download_ms = event_ms(download.get());
  }
  return Status::ok();
}

}  // namespace kiln::opencl
