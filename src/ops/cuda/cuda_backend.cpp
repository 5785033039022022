// The CUDA backend: one device (BackendOptions::device_id), one non-blocking stream per calling thread, a device
// buffer pool bounded by BackendOptions::memory_limit_bytes and a pinned host pool.
//
// render(): upload the series rows the batch spans (min start .. max start + seq_len) and the windows' starts
// relative to them in one copy through a pinned staging block, launch (ops/cuda/render.cu), download into the
// caller's batch (directly when it lies in a pinned block from host_acquire(), else through pinned staging), and
// synchronize the stream. Device and staging blocks go back to their pools after the synchronize.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/buffer_pool.h"
#include "ops/cuda/cuda_ops.h"
#include "core/fault.h"
#include "kiln/device.h"
#include "ops/cuda/common.cuh"
#include "ops/cuda/render.cuh"

namespace kiln {

namespace {

constexpr size_t kDeviceAlign = 256;

// A calling thread's stream and the events that time its stages.
struct ThreadStream {
  enum Event { kStart = 0, kUploaded, kRendered, kDownloaded, kEventCount };
  cudaStream_t stream = nullptr;
  cudaEvent_t events[kEventCount] = {};

  ThreadStream() = default;
  ThreadStream(const ThreadStream&) = delete;
  ThreadStream& operator=(const ThreadStream&) = delete;
  ~ThreadStream() { reset(); }

  Status init() {
    KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (cudaEvent_t& event : events) KILN_CUDA_CHECK(cudaEventCreate(&event));
    return Status::ok();
  }
  void reset() {
    if (stream != nullptr) (void)cudaStreamSynchronize(stream);
    for (cudaEvent_t& event : events) {
      if (event != nullptr) (void)cudaEventDestroy(event);
      event = nullptr;
    }
    if (stream != nullptr) (void)cudaStreamDestroy(stream);
    stream = nullptr;
  }
};

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

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// Copies `count` images of `image_bytes` between buffers whose images lie `dst_stride` / `src_stride` apart.
void copy_images_host(void* dst, int64_t dst_stride, const void* src, int64_t src_stride, size_t image_bytes,
                      int64_t count) {
  if (dst_stride == src_stride && dst_stride == static_cast<int64_t>(image_bytes)) {
    std::memcpy(dst, src, image_bytes * static_cast<size_t>(count));
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(static_cast<uint8_t*>(dst) + i * dst_stride, static_cast<const uint8_t*>(src) + i * src_stride,
                image_bytes);
  }
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(int32_t device, std::string device_name, std::string version, int32_t sm_count, uint64_t memory_limit)
      : m_device(device),
        m_device_name(std::move(device_name)),
        m_version(std::move(version)),
        m_sm_count(sm_count),
        m_device_pool("cuda device pool", device_allocate(device), device_release(device),
                      static_cast<size_t>(memory_limit)),
        m_host_pool("cuda pinned host pool", host_allocate(device), host_release_fn(device)) {}

  ~CudaBackend() override {
    (void)cudaSetDevice(m_device);
    std::lock_guard<std::mutex> lock(m_mutex);
    m_streams.clear();  // synchronizes and destroys every thread's stream
    // Blocks still out via host_acquire() stay allocated: their owners may still read them.
  }

  BackendKind kind() const override { return BackendKind::kCuda; }
  std::string name() const override { return "cuda"; }
  bool is_gpu() const override { return true; }

  std::vector<DeviceInfo> devices() const override {
    DeviceInfo info;
    info.name = m_device_name;
    info.vendor = "NVIDIA";
    info.version = m_version;
    info.compute_units = m_sm_count;
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    if (cudaSetDevice(m_device) == cudaSuccess && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      info.total_memory = static_cast<int64_t>(total_bytes);
      info.free_memory = static_cast<int64_t>(free_bytes);
    } else {
      (void)cudaGetLastError();
    }
    info.pool_bytes = static_cast<int64_t>(m_device_pool.stats().held_bytes);
    return {info};
  }

  bool supports(const OpRequest& request) const override {
    if (request.call != nullptr) return cuda_op_supports(*request.call);
    if (request.op != OpKind::kRender) return false;
    if (request.render == nullptr) return true;
    const RenderParams& p = *request.render;
    return (p.dtype == PixelType::kU8 || p.dtype == PixelType::kF32) &&
           (p.style == ChartStyle::kLine || p.style == ChartStyle::kOhlc);
  }

  Status render(const RenderParams& params, const WindowBatch& windows, const BatchView& out, ThreadPool* /*pool*/,
                RenderTimings* timings) override;

  Result<PoolBlock> host_acquire(size_t bytes) override {
    KILN_CUDA_CHECK(cudaSetDevice(m_device));
    KILN_TRY_ASSIGN(PoolBlock block, m_host_pool.acquire(bytes));
    std::lock_guard<std::mutex> lock(m_mutex);
    m_host_blocks[block.handle] = block.bytes;
    return block;
  }

  void host_release(PoolBlock block) override {
    if (!block) return;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      auto it = m_host_blocks.find(block.handle);
      if (it == m_host_blocks.end()) return;  // not one of ours (or released twice)
      block.bytes = it->second;
      m_host_blocks.erase(it);
    }
    m_host_pool.release(block);
  }

  PoolStats memory_stats() const override { return m_device_pool.stats(); }

  Status run(const OpCall& call, ThreadPool* /*pool*/) override {
    KILN_CUDA_CHECK(cudaSetDevice(m_device));
    KILN_TRY_ASSIGN(ThreadStream * ts, thread_stream());
    CudaOpContext ctx{ts->stream, m_device_pool};
    return cuda_op_run(ctx, call);
  }

 private:
  static BufferPool::AllocateFn device_allocate(int32_t device) {
    return [device](size_t bytes) -> Result<uintptr_t> {
      void* memory = nullptr;
      cudaError_t err = cudaSetDevice(device);
      if (err == cudaSuccess) err = cudaMalloc(&memory, bytes);
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return Status(Errc::kOutOfMemory,
                      "cudaMalloc of " + std::to_string(bytes) + " bytes failed: " + cudaGetErrorString(err));
      }
      return reinterpret_cast<uintptr_t>(memory);
    };
  }
  static BufferPool::ReleaseFn device_release(int32_t device) {
    return [device](uintptr_t handle, size_t /*bytes*/) {
      (void)cudaSetDevice(device);
      if (cudaFree(reinterpret_cast<void*>(handle)) != cudaSuccess) (void)cudaGetLastError();
    };
  }
  static BufferPool::AllocateFn host_allocate(int32_t device) {
    return [device](size_t bytes) -> Result<uintptr_t> {
      void* memory = nullptr;
      cudaError_t err = cudaSetDevice(device);
      if (err == cudaSuccess) err = cudaHostAlloc(&memory, bytes, cudaHostAllocPortable);
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return Status(Errc::kOutOfMemory,
                      "cudaHostAlloc of " + std::to_string(bytes) + " bytes failed: " + cudaGetErrorString(err));
      }
      return reinterpret_cast<uintptr_t>(memory);
    };
  }
  static BufferPool::ReleaseFn host_release_fn(int32_t device) {
    return [device](uintptr_t handle, size_t /*bytes*/) {
      (void)cudaSetDevice(device);
      if (cudaFreeHost(reinterpret_cast<void*>(handle)) != cudaSuccess) (void)cudaGetLastError();
    };
  }

  // The calling thread's stream, created on its first call.
  Result<ThreadStream*> thread_stream() {
    std::lock_guard<std::mutex> lock(m_mutex);
    std::unique_ptr<ThreadStream>& slot = m_streams[std::this_thread::get_id()];
    if (!slot) {
      auto created = std::make_unique<ThreadStream>();
      KILN_TRY(created->init());  // on failure `created` destroys what it made; the slot stays empty
      slot = std::move(created);
    }
    return slot.get();
  }

  // True when [data, data + bytes) lies inside one block handed out by host_acquire().
  bool in_host_block(const void* data, size_t bytes) const {
    const auto address = reinterpret_cast<uintptr_t>(data);
    std::lock_guard<std::mutex> lock(m_mutex);
    auto it = m_host_blocks.upper_bound(address);
    if (it == m_host_blocks.begin()) return false;
    --it;
    return address >= it->first && address - it->first + bytes <= it->second;
  }

  int32_t m_device = 0;
  std::string m_device_name;
  std::string m_version;
  int32_t m_sm_count = 0;
  BufferPool m_device_pool;
  BufferPool m_host_pool;
  mutable std::mutex m_mutex;  // guards m_streams and m_host_blocks
  std::unordered_map<std::thread::id, std::unique_ptr<ThreadStream>> m_streams;
  std::map<uintptr_t, size_t> m_host_blocks;  // host_acquire() blocks in use: pointer -> bytes
};

Status CudaBackend::render(const RenderParams& params, const WindowBatch& windows, const BatchView& out,
                           ThreadPool* /*pool*/, RenderTimings* timings) {
  KILN_TRY(render_validate_output(params, windows, out));
  if (timings != nullptr) *timings = RenderTimings{};
  if (windows.count == 0) return Status::ok();
  KILN_CUDA_CHECK(cudaSetDevice(m_device));
  KILN_TRY_ASSIGN(ThreadStream * ts, thread_stream());
  cudaStream_t stream = ts->stream;

  // Layout. Input (uploaded in one copy): series rows | relative starts. Device: input | scratch | images.
  const int64_t count = windows.count;
  const auto [first_it, last_it] = std::minmax_element(windows.starts, windows.starts + count);
  const int64_t first_row = *first_it;
  const int64_t rows = *last_it - first_row + windows.seq_len;
  const size_t series_bytes = static_cast<size_t>(rows) * static_cast<size_t>(windows.channels) * sizeof(float);
  const size_t starts_offset = align_up(series_bytes, kDeviceAlign);
  const size_t input_bytes = starts_offset + static_cast<size_t>(count) * sizeof(int64_t);
  const size_t scratch_offset = align_up(input_bytes, kDeviceAlign);
  const size_t scratch_bytes = render_scratch_bytes(params, count, windows.seq_len);
  const size_t output_offset = scratch_offset + align_up(scratch_bytes, kDeviceAlign);
  const size_t image_bytes = out.image_bytes();
  const size_t output_bytes = image_bytes * static_cast<size_t>(count);
  const size_t device_bytes = output_offset + output_bytes;
  const size_t out_span = static_cast<size_t>(count - 1) * static_cast<size_t>(out.image_stride) + image_bytes;
  const bool direct = in_host_block(out.data, out_span);
  const size_t staging_output_offset = align_up(input_bytes, kDeviceAlign);  // host staging: input | images
  const size_t staging_bytes = direct ? input_bytes : staging_output_offset + output_bytes;

  CallBlocks blocks(m_device_pool, m_host_pool, stream);
  if (fault_should_fail(FaultSite::kAlloc)) {
    return Status(Errc::kOutOfMemory, "device allocation of " + std::to_string(device_bytes) +
                                          " bytes failed (injected by KILN_FAULT)");
  }
  KILN_TRY_ASSIGN(blocks.device, m_device_pool.acquire(device_bytes));
  KILN_TRY_ASSIGN(blocks.host, m_host_pool.acquire(staging_bytes));
  auto* d_base = reinterpret_cast<uint8_t*>(blocks.device.handle);
  auto* h_base = reinterpret_cast<uint8_t*>(blocks.host.handle);

  std::memcpy(h_base, windows.series + first_row * windows.channels, series_bytes);
  auto* h_starts = reinterpret_cast<int64_t*>(h_base + starts_offset);
  for (int64_t i = 0; i < count; ++i) h_starts[i] = windows.starts[i] - first_row;

  DeviceWindows device_windows;
  device_windows.series = reinterpret_cast<const float*>(d_base);
  device_windows.starts = reinterpret_cast<const int64_t*>(d_base + starts_offset);
  device_windows.count = count;
  device_windows.channels = windows.channels;
  device_windows.seq_len = windows.seq_len;
  device_windows.scratch = d_base + scratch_offset;
  uint8_t* d_out = d_base + output_offset;

  blocks.set_enqueued(true);
  if (timings != nullptr) KILN_CUDA_CHECK(cudaEventRecord(ts->events[ThreadStream::kStart], stream));
  {
    NvtxRange range("kiln.cuda.upload");
    KILN_CUDA_CHECK(cudaMemcpyAsync(d_base, h_base, input_bytes, cudaMemcpyHostToDevice, stream));
  }
  if (timings != nullptr) KILN_CUDA_CHECK(cudaEventRecord(ts->events[ThreadStream::kUploaded], stream));
  {
    NvtxRange range("kiln.cuda.render");
    KILN_TRY(launch_render(params, device_windows, d_out, stream));
  }
  if (timings != nullptr) KILN_CUDA_CHECK(cudaEventRecord(ts->events[ThreadStream::kRendered], stream));
  {
    NvtxRange range("kiln.cuda.download");
    if (!direct) {
      KILN_CUDA_CHECK(
          cudaMemcpyAsync(h_base + staging_output_offset, d_out, output_bytes, cudaMemcpyDeviceToHost, stream));
    } else if (out.image_stride == static_cast<int64_t>(image_bytes)) {
      KILN_CUDA_CHECK(cudaMemcpyAsync(out.data, d_out, output_bytes, cudaMemcpyDeviceToHost, stream));
    } else if (out.image_stride <= INT32_MAX) {
      KILN_CUDA_CHECK(cudaMemcpy2DAsync(out.data, static_cast<size_t>(out.image_stride), d_out, image_bytes,
                                        image_bytes, static_cast<size_t>(count), cudaMemcpyDeviceToHost, stream));
    } else {
      for (int64_t i = 0; i < count; ++i) {
        KILN_CUDA_CHECK(cudaMemcpyAsync(static_cast<uint8_t*>(out.data) + i * out.image_stride,
                                        d_out + static_cast<size_t>(i) * image_bytes, image_bytes,
                                        cudaMemcpyDeviceToHost, stream));
      }
    }
  }
  if (timings != nullptr) KILN_CUDA_CHECK(cudaEventRecord(ts->events[ThreadStream::kDownloaded], stream));
  {
    NvtxRange range("kiln.cuda.sync");
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  blocks.set_enqueued(false);

  if (!direct) {
    copy_images_host(out.data, out.image_stride, h_base + staging_output_offset, static_cast<int64_t>(image_bytes),
                     image_bytes, count);
  }
  if (timings != nullptr) {
    float ms = 0.0f;
    KILN_CUDA_CHECK(cudaEventElapsedTime(&ms, ts->events[ThreadStream::kStart], ts->events[ThreadStream::kUploaded]));
    timings->upload_ms = ms;
    KILN_CUDA_CHECK(
        cudaEventElapsedTime(&ms, ts->events[ThreadStream::kUploaded], ts->events[ThreadStream::kRendered]));
    timings->kernel_ms = ms;
    KILN_CUDA_CHECK(
        cudaEventElapsedTime(&ms, ts->events[ThreadStream::kRendered], ts->events[ThreadStream::kDownloaded]));
    timings->download_ms = ms;
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Backend>> cuda_backend_create(const BackendOptions& options) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    if (err == cudaErrorNoDevice) return Status(Errc::kDeviceError, "no CUDA device");
    if (err == cudaErrorInsufficientDriver) {
      int driver = 0;
      int runtime = 0;
      if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
        return Status(Errc::kDeviceError, "no CUDA driver");
      }
      (void)cudaRuntimeGetVersion(&runtime);
      return Status(Errc::kDeviceError, "CUDA driver too old (supports CUDA " + cuda_version_text(driver) +
                                            ", kiln's runtime needs " + cuda_version_text(runtime) + ")");
    }
    return Status(Errc::kDeviceError, std::string("CUDA unavailable: ") + cudaGetErrorString(err) + " (" +
                                          cudaGetErrorName(err) + ")");
  }
  if (count == 0) return Status(Errc::kDeviceError, "no CUDA device");
  if (options.device_id < 0 || options.device_id >= count) {
    return invalid_argument("GPU_DEVICE_ID=" + std::to_string(options.device_id) + " but there " +
                            (count == 1 ? "is 1 CUDA device" : "are " + std::to_string(count) + " CUDA devices"));
  }
  const int32_t device = options.device_id;
  KILN_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp props{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&props, device));
  const std::string version = "sm_" + std::to_string(props.major) + std::to_string(props.minor);
  if (Status loadable = render_kernels_check(); !loadable.is_ok()) {
    return Status(Errc::kDeviceError, "no kiln kernels for " + std::string(props.name) + " (" + version +
                                          "): " + loadable.message());
  }
  return std::unique_ptr<Backend>(std::make_unique<CudaBackend>(device, std::string(props.name), version,
                                                                props.multiProcessorCount,
                                                                options.memory_limit_bytes));
}

}  // namespace kiln
