// The CUDA backend: one device (BackendOptions::device_id), a device buffer pool bounded by
// BackendOptions::memory_limit_bytes, a pinned host pool, non-blocking streams lent to calls that bring none, and the
// pinned staging slots that host batches go up and down through.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>

#include "core/buffer_pool.h"
#include "core/fenced_releases.h"
#include "core/lending_pool.h"
#include "kiln/device.h"
#include "ops/cuda/common.cuh"
#include "ops/cuda/cuda_ops.h"
#include "ops/cuda/current_device.h"
#include "ops/cuda/render.cuh"

namespace kiln {

namespace {

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(int32_t device, std::string device_name, std::string version, int32_t sm_count, uint64_t memory_limit)
      : m_device(device),
        m_device_name(std::move(device_name)),
        m_version(std::move(version)),
        m_sm_count(sm_count),
        m_memory_limit(memory_limit),
        m_device_pool("cuda device pool", device_allocate(device), device_release(device),
                      static_cast<size_t>(memory_limit)),
        m_host_pool("cuda pinned host pool", host_allocate(device), host_release_fn(device)),
        m_table_pool("cuda pinned table pool", host_allocate(device), host_release_fn(device)),
        m_streams([this] { return stream_make(); }),
        m_staging([this] { return slot_make(); }, kPinnedStagingSlots),
        m_after_foreign_reads(event_ops(device)) {}

  ~CudaBackend() override {
    const CurrentDevice current(m_device);
    m_after_foreign_reads.drain();  // memory other libraries read goes back to m_device_pool first
    m_streams.clear();  // synchronizes and destroys the idle streams
    m_staging.clear();  // waits for the slots' copies and gives their pinned blocks back
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
    const CurrentDevice current(m_device);
    if (current.status() == cudaSuccess && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      info.total_memory = static_cast<int64_t>(total_bytes);
      info.free_memory = static_cast<int64_t>(free_bytes);
    } else {
      (void)cudaGetLastError();
    }
    info.pool_bytes = static_cast<int64_t>(m_device_pool.stats().held_bytes);
    return {info};
  }

  // A family in the op table that accepts the call, when every host image fits the memory limit (a batch can be
  // halved down to one image, not further). Device images are used in place and never go through the pool.
  bool supports(const OpCall& call) const override {
    const CudaOp* op = cuda_op_find(call.op);
    if (op == nullptr) return false;
    if (m_memory_limit > 0) {
      for (const VarShapeBatchView* batch : {&call.in, &call.out}) {
        if (batch->space != MemorySpace::kHost) continue;
        for (int64_t i = 0; i < batch->count; ++i) {
          if ((*batch)[i].packed_bytes() > m_memory_limit) return false;
        }
      }
    }
    return op->supports(call);
  }

  Status run(const OpCall& call, const RunContext& ctx) override {
    const CudaOp* op = cuda_op_find(call.op);
    if (op == nullptr) return Status(Errc::kNotImplemented, std::string("cuda: no ") + op_kind_name(call.op) + " op");
    const CurrentDevice current(m_device);
    KILN_CUDA_CHECK(current.status());
    if (ctx.stream != nullptr) {
      auto* stream = dynamic_cast<CudaStream*>(ctx.stream);
      if (stream == nullptr || &stream->backend() != this) return invalid_argument("cuda: the stream is not this backend's");
      return run_on(*stream, *op, call, ctx);
    }
    KILN_TRY_ASSIGN(auto lease, m_streams.acquire());
    return run_on(*lease, *op, call, ctx);
  }

  Result<std::unique_ptr<Stream>> stream_create() override {
    KILN_TRY_ASSIGN(std::unique_ptr<CudaStream> stream, stream_make());
    return std::unique_ptr<Stream>(std::move(stream));
  }

  Result<PoolBlock> host_acquire(size_t bytes) override {
    const CurrentDevice current(m_device);
    KILN_CUDA_CHECK(current.status());
    KILN_TRY_ASSIGN(PoolBlock block, m_host_pool.acquire(bytes));
    m_pinned.add(block);
    return block;
  }

  void host_release(PoolBlock block) override {
    if (!block) return;
    const PoolBlock ours = m_pinned.remove(block);
    if (ours) m_host_pool.release(ours);
  }

  Result<PoolBlock> device_acquire(size_t bytes) override {
    m_after_foreign_reads.collect();  // memory whose foreign reads are done is free to lend again
    return m_device_pool.acquire(bytes);
  }
  void device_release(PoolBlock block) override {
    if (block) m_device_pool.release(block);
  }
  // The writes to `device` were waited for by whoever made them (kiln's calls and ONNX Runtime's runs synchronize
  // their streams before returning), so the copy need not order itself after any stream: it runs on a lent
  // non-blocking stream, not the legacy one (which would wait for every blocking stream's work, another library's
  // too), and is waited for there.
  Status device_download(const void* device, void* host, size_t bytes) override {
    return lent_stream_copy(host, device, bytes, cudaMemcpyDeviceToHost);
  }
  // From pageable memory the copy may be queued once the bytes are staged, before their DMA ends: the wait for the
  // lent stream covers it.
  Status device_upload(const void* host, void* device, size_t bytes) override {
    return lent_stream_copy(device, host, bytes, cudaMemcpyHostToDevice);
  }

  Result<ForeignStream> foreign_stream_describe(void* native) override {
    if (native == cudaStreamLegacy || native == cudaStreamPerThread) return ForeignStream{native, true};
    const CurrentDevice current(m_device);
    KILN_CUDA_CHECK(current.status());
    unsigned flags = 0;
    int device = -1;
    const auto stream = static_cast<cudaStream_t>(native);
    if (cudaStreamGetFlags(stream, &flags) != cudaSuccess || cudaStreamGetDevice(stream, &device) != cudaSuccess) {
      (void)cudaGetLastError();
      return invalid_argument("stream " + std::to_string(reinterpret_cast<uintptr_t>(native)) +
                              " is no CUDA stream");
    }
    if (device != m_device) {
      return invalid_argument("stream " + std::to_string(reinterpret_cast<uintptr_t>(native)) + " is on cuda:" +
                              std::to_string(device) + ", the memory on cuda:" + std::to_string(m_device));
    }
    return ForeignStream{native, (flags & cudaStreamNonBlocking) == 0};
  }

  // The legacy default stream waits for the work queued before on every stream ordered with it, so an event
  // recorded there passes once the reader's work has, whichever thread queued it.
  void release_after_foreign_reads(const ForeignStream& stream, std::shared_ptr<const void> keep) override {
    const CurrentDevice current(m_device);
    cudaEvent_t event = nullptr;
    if (stream.ordered_with_default && current.status() == cudaSuccess &&
        cudaEventCreateWithFlags(&event, cudaEventDisableTiming) == cudaSuccess) {
      if (cudaEventRecord(event, cudaStreamLegacy) == cudaSuccess) {
        m_after_foreign_reads.add(reinterpret_cast<FencedReleases::Fence>(event), std::move(keep));
        return;
      }
      (void)cudaEventDestroy(event);
    }
    // A stream not ordered with the default one may be destroyed by now: only the whole device says its reads
    // are done. An error here has nobody to go to (the device is lost anyway).
    if (cudaDeviceSynchronize() != cudaSuccess) (void)cudaGetLastError();
  }

  Status images_upload(const VarShapeBatchView& host, const VarShapeBatchView& device) override {
    const CurrentDevice current(m_device);
    KILN_CUDA_CHECK(current.status());
    KILN_TRY_ASSIGN(auto lease, m_streams.acquire());
    CudaOpContext context{lease->stream, m_device_pool, m_host_pool, m_table_pool, m_pinned, m_staging, *lease,
                          nullptr};
    return cuda_images_upload(context, host, device);
  }

  PoolStats memory_stats() const override { return m_device_pool.stats(); }
  PoolStats host_memory_stats() const override { return m_host_pool.stats(); }

 private:
  static BufferPool::AllocateFn device_allocate(int32_t device) {
    return [device](size_t bytes) -> Result<uintptr_t> {
      void* memory = nullptr;
      const CurrentDevice current(device);
      cudaError_t err = current.status();
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
      const CurrentDevice current(device);
      if (cudaFree(reinterpret_cast<void*>(handle)) != cudaSuccess) (void)cudaGetLastError();
    };
  }
  static FencedReleases::FenceOps event_ops(int32_t device) {
    const auto event = [](FencedReleases::Fence fence) { return reinterpret_cast<cudaEvent_t>(fence); };
    return {[event](FencedReleases::Fence fence) {
              const cudaError_t err = cudaEventQuery(event(fence));
              if (err != cudaErrorNotReady && err != cudaSuccess) (void)cudaGetLastError();
              return err != cudaErrorNotReady;  // an error: the device is lost, nothing will read the memory
            },
            [device, event](FencedReleases::Fence fence) {
              const CurrentDevice current(device);
              if (cudaEventSynchronize(event(fence)) != cudaSuccess) (void)cudaGetLastError();
            },
            [device, event](FencedReleases::Fence fence) {
              const CurrentDevice current(device);
              if (cudaEventDestroy(event(fence)) != cudaSuccess) (void)cudaGetLastError();
            }};
  }
  static BufferPool::AllocateFn host_allocate(int32_t device) {
    return [device](size_t bytes) -> Result<uintptr_t> {
      void* memory = nullptr;
      const CurrentDevice current(device);
      cudaError_t err = current.status();
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
      const CurrentDevice current(device);
      if (cudaFreeHost(reinterpret_cast<void*>(handle)) != cudaSuccess) (void)cudaGetLastError();
    };
  }

  Status lent_stream_copy(void* to, const void* from, size_t bytes, cudaMemcpyKind kind) {
    const CurrentDevice current(m_device);
    KILN_CUDA_CHECK(current.status());
    KILN_TRY_ASSIGN(auto lease, m_streams.acquire());
    KILN_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, kind, lease->stream));
    KILN_CUDA_CHECK(cudaStreamSynchronize(lease->stream));
    return Status::ok();
  }

  Result<std::unique_ptr<CudaStream>> stream_make() {
    auto stream = std::make_unique<CudaStream>(*this);
    KILN_TRY(stream->init(m_device));  // on failure `stream` destroys what it made
    return stream;
  }

  Result<std::unique_ptr<PinnedSlot>> slot_make() {
    auto slot = std::make_unique<PinnedSlot>(m_host_pool, m_device);
    KILN_TRY(slot->init());
    return slot;
  }

  Status run_on(CudaStream& stream, const CudaOp& op, const OpCall& call, const RunContext& ctx) {
    CudaOpContext context{stream.stream, m_device_pool, m_host_pool, m_table_pool, m_pinned, m_staging, stream,
                          ctx.timings};
    return op.run(context, call);
  }

  int32_t m_device = 0;
  std::string m_device_name;
  std::string m_version;
  int32_t m_sm_count = 0;
  uint64_t m_memory_limit = 0;
  BufferPool m_device_pool;
  BufferPool m_host_pool;
  BufferPool m_table_pool;  // the calls' small tables, kept out of m_host_pool's figures (staging and host_acquire)
  PinnedBlocks m_pinned;  // host_acquire() blocks in use
  LendingPool<CudaStream> m_streams;
  PinnedStaging m_staging;  // after m_host_pool: its slots give their blocks back to it
  FencedReleases m_after_foreign_reads;  // after m_device_pool: gives memory back to it
};

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
  const CurrentDevice current(device);
  KILN_CUDA_CHECK(current.status());
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
