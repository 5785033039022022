// The render op on OpenCL: the host side of one batch (gather the windows, upload, two launches, download).
// Kernels are in render.cl, built with the runtime's render program.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <vector>

#include "core/fault.h"
#include "ops/opencl/opencl_buffers.h"
#include "ops/opencl/opencl_ops.h"
#include "ops/render.h"
#include "ops/render_px.h"

namespace kiln::opencl {

Status series_encoding_opencl(OpContext& ctx, const OpCall& call);  // opencl_series_encoding.cpp

namespace {

constexpr size_t kLocalColumns = 64;  // work-items per group along dimension 0 (columns; segments of a window)

// From the start of `first` to the end of `last` (the same event for one command), 0 when either is missing.
double event_ms(cl_event first, cl_event last) {
  cl_ulong start = 0;
  cl_ulong end = 0;
  if (first == nullptr || last == nullptr ||
      clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr) != CL_SUCCESS ||
      clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr) != CL_SUCCESS ||
      end < start) {
    return 0.0;
  }
  return static_cast<double>(end - start) * 1e-6;
}

double event_ms(cl_event event) { return event_ms(event, event); }

Status launch_check() {
  if (fault_should_fail(FaultSite::kLaunch)) {
    return Status(Errc::kDeviceError, "opencl: injected kernel launch failure (KILN_FAULT)");
  }
  return Status::ok();
}

struct RenderKernels {
  cl_kernel prepare = nullptr;
  cl_kernel line = nullptr;
  cl_kernel ohlc = nullptr;
  cl_kernel layers = nullptr;
  size_t local_size = 1;  // work-items per group along the columns (fixed, so PoCL specializes the kernels once)
};

Result<RenderKernels> render_kernels(OpContext& ctx) {
  RenderKernels k;
  cl_program program = ctx.runtime.program.get();
  KILN_TRY_ASSIGN(k.prepare, ctx.kernel(program, "render_prepare_kernel"));
  KILN_TRY_ASSIGN(k.line, ctx.kernel(program, "render_line_kernel"));
  KILN_TRY_ASSIGN(k.ohlc, ctx.kernel(program, "render_ohlc_kernel"));
  KILN_TRY_ASSIGN(k.layers, ctx.kernel(program, "render_layers_kernel"));
  size_t local = kLocalColumns;
  for (cl_kernel kernel : {k.prepare, k.line, k.ohlc, k.layers}) {
    size_t limit = 0;
    KILN_CL_CHECK(clGetKernelWorkGroupInfo(kernel, ctx.device().device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(limit),
                                           &limit, nullptr));
    local = std::min(local, std::max<size_t>(limit, 1));
  }
  k.local_size = local;
  return k;
}

}  // namespace

// Every validated render call whose single image fits one device buffer.
bool render_opencl_supports(const OpCall& call, const OpenclDevice& device) {
  const auto& params = *static_cast<const RenderParams*>(call.params);
  const uint64_t image_bytes =
      static_cast<uint64_t>(params.width) * static_cast<uint64_t>(params.height) * pixel_type_size(params.dtype);
  return image_bytes <= device.max_alloc;
}

Status render_opencl(OpContext& ctx, const OpCall& call) {
  constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
  const auto& params = *static_cast<const RenderParams*>(call.params);
  if (chart_style_is_encoding(params.style)) return series_encoding_opencl(ctx, call);
  if (params.color) return render_color_planes(call, [&](const OpCall& gray) { return render_opencl(ctx, gray); });
  const int64_t count = call.in.count;
  const int32_t channels = render_channels(call);
  const int32_t seq_len = render_seq_len(call);
  const int32_t width = params.width;
  const int32_t height = params.height;
  if (count == 0) return Status::ok();
  if (count > kMaxInt) return invalid_argument("opencl: more than 2^31 windows in one batch");
  KILN_TRY_ASSIGN(const RenderKernels kernels, render_kernels(ctx));

  // The windows gathered back to back (they may come from anywhere), window i starting at row i * seq_len.
  const size_t window_floats = static_cast<size_t>(seq_len) * static_cast<size_t>(channels);
  std::vector<float> series(static_cast<size_t>(count) * window_floats);
  std::vector<int64_t> starts(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(series.data() + static_cast<size_t>(i) * window_floats, call.in[i].data, window_floats * sizeof(float));
    starts[static_cast<size_t>(i)] = i * seq_len;
  }

  const size_t series_bytes = series.size() * sizeof(float);
  const size_t starts_bytes = starts.size() * sizeof(int64_t);
  const size_t ranges_bytes = static_cast<size_t>(count) * 4 * sizeof(float);
  const bool ohlc = chart_style_draws_bars(params.style);
  const size_t segment_bytes =
      ohlc ? 0 : static_cast<size_t>(count) * static_cast<size_t>(seq_len - 1) * sizeof(KilnSegment);
  const size_t image_bytes = call.out[0].packed_bytes();
  const size_t out_bytes = image_bytes * static_cast<size_t>(count);

  cl_command_queue q = ctx.queue;
  CallBuffers buffers(ctx.pool, ctx.device(), q);
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
  ClHandle<cl_event> layers_done;
  ClHandle<cl_event> download;        // the (last) read
  ClHandle<cl_event> download_first;  // the first of several reads
  buffers.set_pending(true);
  KILN_CL_CHECK(clEnqueueWriteBuffer(q, series_mem, CL_FALSE, 0, series_bytes, series.data(), 0, nullptr,
                                     upload[0].out()));
  KILN_CL_CHECK(
      clEnqueueWriteBuffer(q, starts_mem, CL_FALSE, 0, starts_bytes, starts.data(), 0, nullptr, upload[1].out()));

  // Per window (one work-group each): min/max/finiteness, over the close lane for line charts and all four lanes
  // for OHLC, then the line segments.
  const int32_t price_channels = channels - render_layer_channels(params);
  const cl_int lane = !ohlc && price_channels == 4 ? 3 : 0;
  const cl_int lanes = ohlc ? 4 : 1;
  const cl_int volume_lane = params.volume ? price_channels : -1;
  const cl_int average_lane = price_channels + (params.volume ? 1 : 0);
  const cl_int averages = params.moving_averages;
  const cl_int price_height = render_price_rows(params);
  const size_t local = kernels.local_size;
  {
    cl_kernel kernel = kernels.prepare;
    KILN_CL_CHECK(kernel_args_set(kernel, series_mem, starts_mem, cl_int{seq_len}, cl_int{channels}, lane, lanes,
                                  volume_lane, average_lane, averages, cl_int{width}, price_height, ranges_mem,
                                  segments_mem));
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
      kernel = kernels.ohlc;
      KILN_CL_CHECK(kernel_args_set(kernel, series_mem, starts_mem, ranges_mem, cl_int{seq_len}, cl_int{channels},
                                    cl_int{params.bar_gap ? 4 : 3}, cl_int{width}, cl_int{height}, price_height,
                                    background, static_cast<cl_float>(params.ink_bullish),
                                    static_cast<cl_float>(params.ink_bearish),
                                    cl_int{params.style == ChartStyle::kCandlestick ? 1 : 0}, as_float, out_mem));
    } else {
      kernel = kernels.line;
      KILN_CL_CHECK(kernel_args_set(kernel, ranges_mem, segments_mem, cl_int{seq_len}, cl_int{width}, cl_int{height},
                                    price_height, cl_float{params.line_width}, background,
                                    static_cast<cl_float>(params.ink), as_float, out_mem));
    }
    // One group per (column block, row tile, window), flattened into one dimension (see kiln_tile_locate()).
    const size_t column_blocks = (static_cast<size_t>(width) + local - 1) / local;
    const size_t tiles = (static_cast<size_t>(height) + kTileRows - 1) / kTileRows;
    const size_t global = column_blocks * tiles * static_cast<size_t>(count) * local;
    KILN_TRY(launch_check());
    KILN_CL_CHECK(clEnqueueNDRangeKernel(q, kernel, 1, nullptr, &global, &local, 0, nullptr, render_done.out()));
  }
  // Volume bars and moving averages over the price layer: one work-item per (column, window).
  if (render_layer_channels(params) > 0) {
    const RenderLayerInks inks = render_layer_inks(params);
    cl_uchar16 average_inks{};
    std::copy(inks.averages.begin(), inks.averages.end(), average_inks.s);
    cl_kernel kernel = kernels.layers;
    KILN_CL_CHECK(kernel_args_set(kernel, series_mem, starts_mem, ranges_mem, static_cast<cl_int>(count),
                                  cl_int{seq_len}, cl_int{channels}, cl_int{ohlc ? 1 : 0},
                                  cl_int{params.bar_gap ? 4 : 3}, cl_int{width}, cl_int{height}, price_height,
                                  volume_lane, cl_int{render_volume_rows(params)}, average_lane, averages,
                                  static_cast<cl_float>(inks.volume_up), static_cast<cl_float>(inks.volume_down),
                                  average_inks, cl_int{params.dtype == PixelType::kF32 ? 1 : 0}, out_mem));
    const size_t items = static_cast<size_t>(count) * static_cast<size_t>(width);
    const size_t global = (items + local - 1) / local * local;
    KILN_TRY(launch_check());
    KILN_CL_CHECK(clEnqueueNDRangeKernel(q, kernel, 1, nullptr, &global, &local, 0, nullptr, layers_done.out()));
  }

  // Straight into `out`: one read when its images are packed back to back, one rectangle (a row per image) when they
  // are evenly spaced, else a read per image.
  const auto* first_image = static_cast<const uint8_t*>(call.out[0].data);
  int64_t stride = count > 1 ? static_cast<const uint8_t*>(call.out[1].data) - first_image : 0;
  for (int64_t i = 2; i < count && stride > 0; ++i) {
    if (static_cast<const uint8_t*>(call.out[i].data) - first_image != i * stride) stride = 0;
  }
  if (count == 1 || stride == static_cast<int64_t>(image_bytes)) {
    KILN_CL_CHECK(clEnqueueReadBuffer(q, out_mem, CL_FALSE, 0, out_bytes, call.out[0].data, 0, nullptr, download.out()));
  } else if (stride > static_cast<int64_t>(image_bytes)) {
    const size_t origin[3] = {0, 0, 0};
    const size_t region[3] = {image_bytes, static_cast<size_t>(count), 1};
    KILN_CL_CHECK(clEnqueueReadBufferRect(q, out_mem, CL_FALSE, origin, origin, region, image_bytes, 0,
                                          static_cast<size_t>(stride), 0, call.out[0].data, 0, nullptr,
                                          download.out()));
  } else {
    for (int64_t i = 0; i < count; ++i) {
      KILN_CL_CHECK(clEnqueueReadBuffer(q, out_mem, CL_FALSE, static_cast<size_t>(i) * image_bytes, image_bytes,
                                        call.out[i].data, 0, nullptr,
                                        i + 1 == count ? download.out() : i == 0 ? download_first.out() : nullptr));
    }
  }
  cl_event wait = download.get();
  KILN_CL_CHECK(clWaitForEvents(1, &wait));
  KILN_CL_CHECK(clFinish(q));
  buffers.set_pending(false);

  if (OpTimings* timings = ctx.timings; timings != nullptr) {
    timings->upload_ms = event_ms(upload[0].get()) + event_ms(upload[1].get());
    timings->kernel_ms = event_ms(prepare_done.get()) + event_ms(render_done.get()) + event_ms(layers_done.get());
    timings->download_ms =
        download_first.get() != nullptr ? event_ms(download_first.get(), download.get()) : event_ms(download.get());
  }
  return Status::ok();
}

}  // namespace kiln::opencl
