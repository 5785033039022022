// The OpenCL backend: one device (GPU/accelerator; CPU devices such as PoCL only when asked for), a device buffer
// pool under the memory limit, a pool of mapped host buffers, and one command queue per calling thread.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/buffer_pool.h"
#include "kiln/device.h"
#include "ops/opencl/opencl_ops.h"
#include "ops/opencl/opencl_render.h"
#include "ops/opencl/opencl_runtime.h"

namespace kiln {

namespace {

using opencl::ClHandle;
using opencl::OpenclRuntime;
using opencl::RenderQueue;

class OpenclBackend final : public Backend {
 public:
  OpenclBackend(std::shared_ptr<const OpenclRuntime> runtime, const BackendOptions& options)
      : m_runtime(std::move(runtime)),
        m_options(options),
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

  // Render requests whose parameters pass validation and whose single image fits one device buffer and the limit.
  bool supports(const OpRequest& request) const override {
    if (request.call != nullptr) return opencl::opencl_op_supports(*request.call, m_runtime->device);
    if (request.op != OpKind::kRender || request.render == nullptr) return false;
    const RenderParams& params = *request.render;
    WindowBatch probe;
    probe.channels = params.style == ChartStyle::kOhlc ? 4 : 1;
    probe.seq_len = 2;
    if (!render_validate(params, probe).is_ok()) return false;
    const uint64_t image_bytes =
        static_cast<uint64_t>(params.width) * static_cast<uint64_t>(params.height) * pixel_type_size(params.dtype);
    if (image_bytes > m_runtime->device.max_alloc) return false;
    return m_options.memory_limit_bytes == 0 || image_bytes <= m_options.memory_limit_bytes;
  }

  Status render(const RenderParams& params, const WindowBatch& windows, const BatchView& out, ThreadPool* /*pool*/,
                RenderTimings* timings) override {
    KILN_TRY(render_validate_output(params, windows, out));
    if (windows.count == 0) return Status::ok();
    KILN_TRY_ASSIGN(RenderQueue * queue, queue_for_this_thread());
    return opencl::render_opencl(*queue, m_device_pool, m_runtime->device, params, windows, out, timings);
  }

  Status run(const OpCall& call, ThreadPool* /*pool*/) override {
    KILN_TRY_ASSIGN(RenderQueue * queue, queue_for_this_thread());
    opencl::OpKernels* kernels = nullptr;
    {
      std::lock_guard<std::mutex> lock(m_queues_mutex);
      kernels = &m_op_kernels[std::this_thread::get_id()];
    }
    opencl::OpContext ctx{*m_runtime, queue->queue.get(), m_device_pool, *kernels};
    return opencl::opencl_op_run(ctx, call);
  }

  Result<PoolBlock> host_acquire(size_t bytes) override { return m_host_pool.acquire(bytes); }
  void host_release(PoolBlock block) override { m_host_pool.release(block); }
  PoolStats memory_stats() const override { return m_device_pool.stats(); }

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

  // The calling thread's queue and kernels, created on its first render.
  Result<RenderQueue*> queue_for_this_thread() {
    const std::thread::id id = std::this_thread::get_id();
    std::lock_guard<std::mutex> lock(m_queues_mutex);
    if (auto it = m_queues.find(id); it != m_queues.end()) return it->second.get();
    KILN_TRY_ASSIGN(auto created, opencl::render_queue_create(*m_runtime));
    RenderQueue* queue = created.get();
    m_queues.emplace(id, std::move(created));
    return queue;
  }

  // Declaration order is destruction order reversed: the pools go first, while the queues and context they
  // release into still exist.
  std::shared_ptr<const OpenclRuntime> m_runtime;
  BackendOptions m_options;
  ClHandle<cl_command_queue> m_host_queue;
  std::mutex m_host_mutex;
  std::map<uintptr_t, cl_mem> m_host_buffers;  // mapped pointer -> its buffer
  std::mutex m_queues_mutex;
  std::unordered_map<std::thread::id, std::unique_ptr<RenderQueue>> m_queues;
  std::unordered_map<std::thread::id, opencl::OpKernels> m_op_kernels;  // image-op kernels per thread
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
