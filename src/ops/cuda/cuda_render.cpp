// The render op on CUDA, host side: gather the windows and their starts into one pinned staging block and upload
// them in one copy, launch (ops/cuda/render.cu), download into the caller's images (directly when they lie in a
// pinned block from host_acquire(), else through pinned staging), and synchronize the stream. Device and staging
// blocks go back to their pools after the synchronize.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

#include "core/fault.h"
#include "ops/cuda/common.cuh"
#include "ops/cuda/cuda_ops.h"
#include "ops/cuda/render.cuh"
#include "ops/render.h"

namespace kiln {

Status series_encoding_cuda(CudaOpContext& ctx, const OpCall& call);  // series_encoding.cu

namespace {

constexpr size_t kDeviceAlign = 256;

// Blocks used by one render call. Released on every exit path; when work was enqueued and not yet waited for
// (an error path), the stream is synchronized first so no block returns to its pool while a copy or kernel may
// still touch it.
class CallBlocks {
 public:
  CallBlocks(BufferPool& device_pool, BufferPool& host_pool, cudaStream_t stream)
      : m_device_pool(device_pool), m_host_pool(host_pool), m_stream(stream) {}
  CallBlocks(const CallBlocks&) = delete;
  CallBlocks& operator=(const CallBlocks&) = delete;
  ~CallBlocks() {
    if (m_enqueued) (void)cudaStreamSynchronize(m_stream);
    m_device_pool.release(device);
    m_host_pool.release(host);
  }
  void set_enqueued(bool enqueued) { m_enqueued = enqueued; }

  PoolBlock device;
  PoolBlock host;

 private:
  BufferPool& m_device_pool;
  BufferPool& m_host_pool;
  cudaStream_t m_stream;
  bool m_enqueued = false;
};

// Bytes between consecutive images of `out` when they are evenly spaced, else 0.
int64_t even_stride(const VarShapeBatchView& out) {
  if (out.count < 2) return static_cast<int64_t>(out[0].packed_bytes());
  const auto* first = static_cast<const uint8_t*>(out[0].data);
  const int64_t stride = static_cast<const uint8_t*>(out[1].data) - first;
  for (int64_t i = 2; i < out.count; ++i) {
    if (static_cast<const uint8_t*>(out[i].data) - first != i * stride) return 0;
  }
  return stride;
}

}  // namespace

// Every validated render call with host windows and images (they are gathered and copied with memcpy): line and
// OHLC, u8 and f32.
bool render_cuda_supports(const OpCall& call) {
  return call.in.space == MemorySpace::kHost && call.out.space == MemorySpace::kHost;
}

Status render_cuda(CudaOpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const RenderParams*>(call.params);
  if (chart_style_is_encoding(params.style)) return series_encoding_cuda(ctx, call);
  if (params.color) return render_color_planes(call, [&](const OpCall& gray) { return render_cuda(ctx, gray); });
  OpTimings* timings = ctx.timings;
  if (timings != nullptr) *timings = OpTimings{};
  const int64_t count = call.in.count;
  if (count == 0) return Status::ok();
  cudaStream_t stream = ctx.stream;
  const int32_t seq_len = render_seq_len(call);
  const int32_t channels = render_channels(call);

  // Layout. Input (uploaded in one copy): the windows back to back | their starts. Device: input | scratch | images.
  const size_t window_bytes = static_cast<size_t>(seq_len) * static_cast<size_t>(channels) * sizeof(float);
  const size_t series_bytes = window_bytes * static_cast<size_t>(count);
  const size_t starts_offset = align_up(series_bytes, kDeviceAlign);
  const size_t input_bytes = starts_offset + static_cast<size_t>(count) * sizeof(int64_t);
  const size_t scratch_offset = align_up(input_bytes, kDeviceAlign);
  const size_t scratch_bytes = render_scratch_bytes(params, count, seq_len);
  const size_t output_offset = scratch_offset + align_up(scratch_bytes, kDeviceAlign);
  const size_t image_bytes = call.out[0].packed_bytes();
  const size_t output_bytes = image_bytes * static_cast<size_t>(count);
  const size_t device_bytes = output_offset + output_bytes;
  const int64_t out_stride = even_stride(call.out);
  const size_t out_span = static_cast<size_t>(count - 1) * static_cast<size_t>(out_stride) + image_bytes;
  const bool direct = out_stride >= static_cast<int64_t>(image_bytes) && ctx.pinned.contains(call.out[0].data, out_span);
  const size_t staging_output_offset = align_up(input_bytes, kDeviceAlign);  // host staging: input | images
  const size_t staging_bytes = direct ? input_bytes : staging_output_offset + output_bytes;

  CallBlocks blocks(ctx.device_pool, ctx.host_pool, stream);
  if (fault_should_fail(FaultSite::kAlloc)) {
    return Status(Errc::kOutOfMemory, "device allocation of " + std::to_string(device_bytes) +
                                          " bytes failed (injected by KILN_FAULT)");
  }
  KILN_TRY_ASSIGN(blocks.device, ctx.device_pool.acquire(device_bytes));
  KILN_TRY_ASSIGN(blocks.host, ctx.host_pool.acquire(staging_bytes));
  auto* d_base = reinterpret_cast<uint8_t*>(blocks.device.handle);
  auto* h_base = reinterpret_cast<uint8_t*>(blocks.host.handle);

  auto* h_starts = reinterpret_cast<int64_t*>(h_base + starts_offset);
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(h_base + static_cast<size_t>(i) * window_bytes, call.in[i].data, window_bytes);
    h_starts[i] = i * seq_len;
  }

  DeviceWindows device_windows;
  device_windows.series = reinterpret_cast<const float*>(d_base);
  device_windows.starts = reinterpret_cast<const int64_t*>(d_base + starts_offset);
  device_windows.count = count;
  device_windows.channels = channels;
  device_windows.seq_len = seq_len;
  device_windows.scratch = d_base + scratch_offset;
  uint8_t* d_out = d_base + output_offset;
  cudaEvent_t* events = ctx.timing.events;

  blocks.set_enqueued(true);
  if (timings != nullptr) KILN_CUDA_CHECK(cudaEventRecord(events[CudaStream::kStart], stream));
  {
    NvtxRange range("kiln.cuda.upload");
    KILN_CUDA_CHECK(cudaMemcpyAsync(d_base, h_base, input_bytes, cudaMemcpyHostToDevice, stream));
  }
  if (timings != nullptr) KILN_CUDA_CHECK(cudaEventRecord(events[CudaStream::kUploaded], stream));
  {
    NvtxRange range("kiln.cuda.render");
    KILN_TRY(launch_render(params, device_windows, d_out, stream));
  }
  if (timings != nullptr) KILN_CUDA_CHECK(cudaEventRecord(events[CudaStream::kRan], stream));
  {
    NvtxRange range("kiln.cuda.download");
    void* out0 = call.out[0].data;
    if (!direct) {
      KILN_CUDA_CHECK(
          cudaMemcpyAsync(h_base + staging_output_offset, d_out, output_bytes, cudaMemcpyDeviceToHost, stream));
    } else if (out_stride == static_cast<int64_t>(image_bytes)) {
      KILN_CUDA_CHECK(cudaMemcpyAsync(out0, d_out, output_bytes, cudaMemcpyDeviceToHost, stream));
    } else if (out_stride <= INT32_MAX) {
      KILN_CUDA_CHECK(cudaMemcpy2DAsync(out0, static_cast<size_t>(out_stride), d_out, image_bytes, image_bytes,
                                        static_cast<size_t>(count), cudaMemcpyDeviceToHost, stream));
    } else {
      for (int64_t i = 0; i < count; ++i) {
        KILN_CUDA_CHECK(cudaMemcpyAsync(call.out[i].data, d_out + static_cast<size_t>(i) * image_bytes, image_bytes,
                                        cudaMemcpyDeviceToHost, stream));
      }
    }
  }
  if (timings != nullptr) KILN_CUDA_CHECK(cudaEventRecord(events[CudaStream::kDownloaded], stream));
  {
    NvtxRange range("kiln.cuda.sync");
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  blocks.set_enqueued(false);

  if (!direct) {
    for (int64_t i = 0; i < count; ++i) {
      std::memcpy(call.out[i].data, h_base + staging_output_offset + static_cast<size_t>(i) * image_bytes, image_bytes);
    }
  }
  if (timings != nullptr) {
    float ms = 0.0f;
    KILN_CUDA_CHECK(cudaEventElapsedTime(&ms, events[CudaStream::kStart], events[CudaStream::kUploaded]));
    timings->upload_ms = ms;
    KILN_CUDA_CHECK(cudaEventElapsedTime(&ms, events[CudaStream::kUploaded], events[CudaStream::kRan]));
    timings->kernel_ms = ms;
    KILN_CUDA_CHECK(cudaEventElapsedTime(&ms, events[CudaStream::kRan], events[CudaStream::kDownloaded]));
    timings->download_ms = ms;
  }
  return Status::ok();
}

}  // namespace kiln
