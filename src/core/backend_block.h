// Memory from a backend's pools, given back to that backend when dropped. HostBlock: host memory (pinned for CUDA,
// mapped for OpenCL, pooled plain memory for the CPU), what kiln stages batches in and binds inference inputs and
// outputs to. DeviceBlock: device memory addressed by pointer (CUDA), what device-space calls and ONNX Runtime's
// CUDA provider share without a copy through the host.
#pragma once

#include <cstddef>
#include <utility>

#include "core/buffer_pool.h"
#include "kiln/device.h"

namespace kiln {

template <MemorySpace kSpace>
class BackendBlock {
 public:
  BackendBlock() = default;
  ~BackendBlock() { reset(); }
  BackendBlock(BackendBlock&& other) noexcept { *this = std::move(other); }
  BackendBlock& operator=(BackendBlock&& other) noexcept {
    if (this != &other) {
      reset();
      m_backend = std::exchange(other.m_backend, nullptr);
      m_block = std::exchange(other.m_block, PoolBlock{});
    }
    return *this;
  }
  BackendBlock(const BackendBlock&) = delete;
  BackendBlock& operator=(const BackendBlock&) = delete;

  // At least `bytes` (the pool's size class); not initialized.
  static Result<BackendBlock> acquire(Backend& backend, size_t bytes) {
    KILN_TRY_ASSIGN(const PoolBlock block, pool_acquire(backend, bytes));
    BackendBlock held;
    held.m_backend = &backend;
    held.m_block = block;
    return held;
  }
  void reset() {
    if (m_backend != nullptr && m_block) pool_release(*m_backend, m_block);
    m_backend = nullptr;
    m_block = PoolBlock{};
  }
  void* data() const { return reinterpret_cast<void*>(m_block.handle); }
  size_t bytes() const { return m_block.bytes; }
  Backend* backend() const { return m_backend; }

 private:
  static Result<PoolBlock> pool_acquire(Backend& backend, size_t bytes) {
    if constexpr (kSpace == MemorySpace::kHost) return backend.host_acquire(bytes);
    else return backend.device_acquire(bytes);
  }
  static void pool_release(Backend& backend, PoolBlock block) {
    if constexpr (kSpace == MemorySpace::kHost) backend.host_release(block);
    else backend.device_release(block);
  }

  Backend* m_backend = nullptr;
  PoolBlock m_block;
};

using HostBlock = BackendBlock<MemorySpace::kHost>;
using DeviceBlock = BackendBlock<MemorySpace::kDevice>;

}  // namespace kiln
