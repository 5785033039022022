// Helpers of one OpenCL call: kernel arguments, and the device buffers taken from the backend's pool and given
// back when the call ends.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/buffer_pool.h"
#include "core/fault.h"
#include "ops/opencl/opencl_runtime.h"

namespace kiln::opencl {

// Sets a kernel's arguments in order; the first failure's code.
template <typename... Args>
cl_int kernel_args_set(cl_kernel kernel, const Args&... args) {
  cl_uint index = 0;
  cl_int err = CL_SUCCESS;
  ((err = err == CL_SUCCESS ? clSetKernelArg(kernel, index, sizeof(args), &args) : err, ++index), ...);
  return err;
}

// The device buffers of one call, and host copies of its small tables. Gives them back on destruction, after the
// queue has finished with them when commands were enqueued and not waited for.
class CallBuffers {
 public:
  CallBuffers(BufferPool& pool, const OpenclDevice& device, cl_command_queue queue)
      : m_pool(pool), m_device(device), m_queue(queue) {}
  ~CallBuffers() {
    if (m_pending) clFinish(m_queue);
    for (const PoolBlock& block : m_blocks) m_pool.release(block);
  }
  CallBuffers(const CallBuffers&) = delete;
  CallBuffers& operator=(const CallBuffers&) = delete;

  Result<cl_mem> acquire(size_t bytes, const char* what) {
    if (fault_should_fail(FaultSite::kAlloc)) {
      return Status(Errc::kOutOfMemory, std::string("opencl: injected allocation failure (KILN_FAULT) for ") + what);
    }
    if (bytes > m_device.max_alloc) {
      return Status(Errc::kOutOfMemory, std::string("opencl: ") + what + " needs " + std::to_string(bytes) +
                                            " bytes, more than the device's largest buffer (" +
                                            std::to_string(m_device.max_alloc) + " bytes)");
    }
    KILN_TRY_ASSIGN(PoolBlock block, m_pool.acquire(bytes));
    m_blocks.push_back(block);
    return reinterpret_cast<cl_mem>(block.handle);
  }
  void set_pending(bool pending) { m_pending = pending; }
  // A copy of `data` that lives until the call's commands end: the source of a write that is not waited for.
  const void* host_keep(const void* data, size_t bytes) {
    const auto* from = static_cast<const uint8_t*>(data);
    m_kept.emplace_back(from, from + bytes);
    m_pending = true;
    return m_kept.back().data();
  }

 private:
  BufferPool& m_pool;
  const OpenclDevice& m_device;
  cl_command_queue m_queue;
  std::vector<PoolBlock> m_blocks;
  std::vector<std::vector<uint8_t>> m_kept;  // host_keep's (a moved vector keeps its bytes where they were)
  bool m_pending = false;
};

}  // namespace kiln::opencl
