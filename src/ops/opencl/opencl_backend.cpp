// The OpenCL backend: one device (GPU/accelerator; CPU devices such as PoCL only when asked for), a device buffer
// pool under the memory limit, a pool of mapped host buffers, and streams (an in-order queue with its own kernel
// objects) lent to calls that bring none.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/buffer_pool.h"
#include "core/lending_pool.h"
#include "kiln/device.h"
#include "ops/opencl/opencl_ops.h"
#include "ops/opencl/opencl_runtime.h"

namespace kiln {

namespace {

using opencl::ClHandle;
using opencl::OpenclRuntime;

class OpenclStream final : public Stream {
 public:
  explicit OpenclStream(Backend& backend) : m_backend(backend) {}
  Backend& backend() const override { return m_backend; }
  Status synchronize() override {
    KILN_CL_CHECK(clFinish(queue.get()));
    return Status::ok();
  }

  ClHandle<cl_command_queue> queue;  // in-order, with profiling
  opencl::OpKernels kernels;

 private:
  Backend& m_backend;
};

class OpenclBackend final : public Backend {
 public:
  OpenclBackend(std::shared_ptr<const OpenclRuntime> runtime, const BackendOptions& options)
      : m_runtime(std::move(runtime)),
        m_options(options),
        m_streams([this] { return stream_make(); }),
        m_device_pool(
            "opencl device pool", [this](size_t bytes) { return device_allocate(bytes); },
            [](uintptr_t handle, size_t) { clReleaseMemObject(reinterpret_cast<cl_mem>(handle)); },
            static_cast<size_t>(options.memory_limit_bytes)),
        m_host_pool(
            "opencl host pool", [this](size_t bytes) { return host_allocate(bytes); },
            [this](uintptr_t handle, size_t) { host_free(handle); }) {}

  // The queue that maps and unmaps the host pool's buffers.
  Status init() {
    cl_int err = CL_SUCCESS;
    m_host_queue.reset(clCreateCommandQueue(m_runtime->context.get(), m_runtime->device.device, 0, &err));
    if (err != CL_SUCCESS) return opencl::opencl_status(err, "clCreateCommandQueue");
    return Status::ok();
  }

  BackendKind kind() const override { return BackendKind::kOpenCL; }
  std::string name() const override { return "opencl"; }
  bool is_gpu() const override { return true; }

  std::vector<DeviceInfo> devices() const override {
    const opencl::OpenclDevice& d = m_runtime->device;
    const auto held = static_cast<int64_t>(m_device_pool.stats().held_bytes);
    DeviceInfo info;
    info.name = d.name;
    info.vendor = d.vendor;
    info.version = d.version;
    info.total_memory = d.global_memory;
    info.free_memory = std::max<int64_t>(d.global_memory - held, 0);
    if (m_options.memory_limit_bytes > 0) {
      const auto limit = static_cast<int64_t>(m_options.memory_limit_bytes);
      info.free_memory = std::min(info.free_memory, std::max<int64_t>(limit - held, 0));
    }
    info.compute_units = d.compute_units;
    info.pool_bytes = held;
    return {info};
  }

  // Host batches of a family in the op table that accepts the call, when every image fits one device buffer and the
  // memory limit (a batch can be halved down to one image, not further).
  bool supports(const OpCall& call) const override {
    const opencl::OpenclOp* op = opencl::opencl_op_find(call.op);
    if (op == nullptr || call.in.space != MemorySpace::kHost || call.out.space != MemorySpace::kHost) return false;
    uint64_t limit = m_runtime->device.max_alloc;
    if (m_options.memory_limit_bytes > 0) limit = std::min<uint64_t>(limit, m_options.memory_limit_bytes);
    for (const VarShapeBatchView* batch : {&call.in, &call.out}) {
      for (int64_t i = 0; i < batch->count; ++i) {
        if ((*batch)[i].packed_bytes() > limit) return false;
      }
    }
    return op->supports(call, m_runtime->device);
  }

  Status run(const OpCall& call, const RunContext& ctx) override {
    const opencl::OpenclOp* op = opencl::opencl_op_find(call.op);
    if (op == nullptr) return Status(Errc::kNotImplemented, std::string("opencl: no ") + op_kind_name(call.op) + " op");
    if (ctx.stream != nullptr) {
      auto* stream = dynamic_cast<OpenclStream*>(ctx.stream);
      if (stream == nullptr || &stream->backend() != this) return invalid_argument("opencl: the stream is not this backend's");
      return run_on(*stream, *op, call, ctx);
    }
    KILN_TRY_ASSIGN(auto lease, m_streams.acquire());
    return run_on(*lease, *op, call, ctx);
  }

  Result<std::unique_ptr<Stream>> stream_create() override {
    KILN_TRY_ASSIGN(std::unique_ptr<OpenclStream> stream, stream_make());
    return std::unique_ptr<Stream>(std::move(stream));
  }

  Result<PoolBlock> host_acquire(size_t bytes) override { return m_host_pool.acquire(bytes); }
  void host_release(PoolBlock block) override { m_host_pool.release(block); }
  PoolStats memory_stats() const override { return m_device_pool.stats(); }
  PoolStats host_memory_stats() const override { return m_host_pool.stats(); }

 private:
  Result<uintptr_t> device_allocate(size_t bytes) {
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(m_runtime->context.get(), CL_MEM_READ_WRITE, bytes, nullptr, &err);
    if (err != CL_SUCCESS) return opencl::opencl_status(err, "clCreateBuffer(" + std::to_string(bytes) + " bytes)");
    return reinterpret_cast<uintptr_t>(mem);
  }

  // A CL_MEM_ALLOC_HOST_PTR buffer, mapped for the lifetime of the block; the handle is the mapped pointer.
  Result<uintptr_t> host_allocate(size_t bytes) {
    cl_int err = CL_SUCCESS;
    cl_mem mem =
        clCreateBuffer(m_runtime->context.get(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &err);
    if (err != CL_SUCCESS) return opencl::opencl_status(err, "clCreateBuffer(host, " + std::to_string(bytes) + ")");
    std::lock_guard<std::mutex> lock(m_host_mutex);
    void* mapped = clEnqueueMapBuffer(m_host_queue.get(), mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                      nullptr, nullptr, &err);
    if (err != CL_SUCCESS || mapped == nullptr) {
      clReleaseMemObject(mem);
      return opencl::opencl_status(err != CL_SUCCESS ? err : CL_MAP_FAILURE, "clEnqueueMapBuffer");
    }
    const auto handle = reinterpret_cast<uintptr_t>(mapped);
    m_host_buffers[handle] = mem;
    return handle;
  }

  void host_free(uintptr_t handle) {
    std::lock_guard<std::mutex> lock(m_host_mutex);
    const auto it = m_host_buffers.find(handle);
    if (it == m_host_buffers.end()) return;
    clEnqueueUnmapMemObject(m_host_queue.get(), it->second, reinterpret_cast<void*>(handle), 0, nullptr, nullptr);
    clFinish(m_host_queue.get());
    clReleaseMemObject(it->second);
    m_host_buffers.erase(it);
  }

  Result<std::unique_ptr<OpenclStream>> stream_make() {
    auto stream = std::make_unique<OpenclStream>(*this);
    cl_int err = CL_SUCCESS;
    stream->queue.reset(clCreateCommandQueue(m_runtime->context.get(), m_runtime->device.device,
                                             CL_QUEUE_PROFILING_ENABLE, &err));
    if (err != CL_SUCCESS) return opencl::opencl_status(err, "clCreateCommandQueue");
    return stream;
  }

  Status run_on(OpenclStream& stream, const opencl::OpenclOp& op, const OpCall& call, const RunContext& ctx) {
    opencl::OpContext context{*m_runtime, stream.queue.get(), m_device_pool, stream.kernels, ctx.timings};
    return op.run(context, call);
  }

  // Declaration order is destruction order reversed: the pools go first, while the queues and context they
  // release into still exist.
  std::shared_ptr<const OpenclRuntime> m_runtime;
  BackendOptions m_options;
  ClHandle<cl_command_queue> m_host_queue;
  std::mutex m_host_mutex;
  std::map<uintptr_t, cl_mem> m_host_buffers;  // mapped pointer -> its buffer
  LendingPool<OpenclStream> m_streams;
  BufferPool m_device_pool;
  BufferPool m_host_pool;
};

}  // namespace

Result<std::unique_ptr<Backend>> opencl_backend_create(const BackendOptions& options) {
  KILN_TRY_ASSIGN(opencl::OpenclDevice device, opencl::opencl_device_select(options));
  KILN_TRY_ASSIGN(auto runtime, opencl::opencl_runtime_get(device));
  auto backend = std::make_unique<OpenclBackend>(std::move(runtime), options);
  KILN_TRY(backend->init());
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace kiln
