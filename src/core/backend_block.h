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
    Result<PoolBlock> block =
        kSpace == MemorySpace::kHost ? backend.host_acquire(bytes) : backend.device_acquire(bytes);
    if (!block.is_ok()) return block.status();
    BackendBlock held;
    held.m_backend = &backend;
    held.m_block = block.value();
    return held;
  }
  void reset() {
    if (m_backend != nullptr && m_block) {
      if constexpr (kSpace == MemorySpace::kHost) m_backend->host_release(m_block);
      else m_backend->device_release(m_block);
    }
    m_backend = nullptr;
    m_block = PoolBlock{};
  }
  void* data() const { return reinterpret_cast<void*>(m_block.handle); }
  size_t bytes() const { return m_block.bytes; }
  Backend* backend() const { return m_backend; }

 private:
  Backend* m_backend = nullptr;
  PoolBlock m_block;
};

using HostBlock = BackendBlock<MemorySpace::kHost>;
using DeviceBlock = BackendBlock<MemorySpace::kDevice>;

}  // namespace kiln
