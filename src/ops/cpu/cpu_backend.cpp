// The CPU backend: always compiled, always registered, always last.
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include <unistd.h>

#include "core/buffer_pool.h"
#include "core/cpu_isa.h"
#include "core/host_memory.h"
#include "core/thread_pool.h"
#include "kiln/device.h"
#include "kiln/ops.h"
#include "ops/cpu/cpu_ops.h"

namespace kiln {

namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "CPU";
}

// Batches of a job come and go in the same sizes: reusing their blocks spares the kernel's page faults and zeroing
// of fresh memory on every batch (tens of megabytes per batch of model inputs). Cached blocks beyond a sixteenth of
// the host's memory are given back.
BufferPool host_pool_make() {
  auto allocate = [](size_t bytes) -> Result<uintptr_t> {
    void* memory = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (memory == nullptr) {
      return Status(Errc::kOutOfMemory, "host allocation of " + std::to_string(bytes) + " bytes failed");
    }
    return reinterpret_cast<uintptr_t>(memory);
  };
  auto release = [](uintptr_t handle, size_t) { std::free(reinterpret_cast<void*>(handle)); };
  return BufferPool("cpu host pool", allocate, release);
}

class CpuBackend final : public Backend {
 public:
  CpuBackend() : m_host_pool(host_pool_make()), m_host_cache_limit(host_memory_limit_bytes() / 16) {}

  BackendKind kind() const override { return BackendKind::kCpu; }
  std::string name() const override { return "cpu"; }
  bool is_gpu() const override { return false; }

  std::vector<DeviceInfo> devices() const override {
    DeviceInfo info;
    info.name = cpu_model_name();
    info.vendor = "host";
    info.version = cpu_isa_name(cpu_isa_active());
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long available = ::sysconf(_SC_AVPHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGE_SIZE);
    info.total_memory = static_cast<int64_t>(pages) * page_size;
    info.free_memory = static_cast<int64_t>(available) * page_size;
    info.compute_units = static_cast<int32_t>(std::thread::hardware_concurrency());
    return {info};
  }

  // Every family on host batches: the CPU implementations are the references.
  bool supports(const OpCall& call) const override {
    return cpu_op_find(call.op) != nullptr && call.in.space == MemorySpace::kHost &&
           call.out.space == MemorySpace::kHost;
  }

  // A batch of at least as many images as threads is split by whole images (each thread runs the op on its slice
  // alone: no fork and join per image, each image in one core's cache); smaller batches split each image's rows.
  Status run(const OpCall& call, const RunContext& ctx) override {
    const CpuOp* op = cpu_op_find(call.op);
    if (op == nullptr) return Status(Errc::kNotImplemented, std::string("cpu: no ") + op_kind_name(call.op) + " op");
    ThreadPool* pool = ctx.pool;
    if (pool == nullptr || pool->size() <= 1 || call.in.count < pool->size()) return op->run(call, pool);
    std::mutex mutex;
    Status first_error;
    // At least count / threads images per block (rounded down, so every thread gets a block: 3 images on 2 threads
    // are 2 blocks, not one of 2 and the caller's remainder alone).
    const int64_t per_thread = call.in.count / pool->size();
    pool->parallel_for(
        call.in.count,
        [&](int64_t begin, int64_t end) {
          const OpCallSlice slice = op_call_slice(call, begin, end - begin);
          Status status = op->run(slice.call, nullptr);
          const std::lock_guard<std::mutex> lock(mutex);
          if (!status.is_ok() && first_error.is_ok()) first_error = std::move(status);
        },
        per_thread);
    return first_error;
  }

  Result<PoolBlock> host_acquire(size_t bytes) override { return m_host_pool.acquire(bytes); }
  PoolStats host_memory_stats() const override { return m_host_pool.stats(); }
  void host_release(PoolBlock block) override {
    m_host_pool.release(block);
    const PoolStats stats = m_host_pool.stats();
    if (stats.held_bytes - stats.in_use_bytes > m_host_cache_limit) m_host_pool.trim();
  }

 private:
  BufferPool m_host_pool;
  const uint64_t m_host_cache_limit;  // cached bytes kept for reuse
};

}  // namespace

std::unique_ptr<Backend> cpu_backend_create() { return std::make_unique<CpuBackend>(); }

}  // namespace kiln
