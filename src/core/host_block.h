// Host memory from a backend's pool (pinned for CUDA, mapped for OpenCL, pooled plain memory for the CPU), given
// back to that backend when dropped. What kiln stages batches in and binds inference inputs and outputs to.
#pragma once

#include <cstddef>
#include <utility>

#include "core/buffer_pool.h"
#include "kiln/device.h"

namespace kiln {

class HostBlock {
 public:
  HostBlock() = default;
  ~HostBlock() { reset(); }
  HostBlock(HostBlock&& other) noexcept { *this = std::move(other); }
  HostBlock& operator=(HostBlock&& other) noexcept {
    if (this != &other) {
      reset();
      m_backend = std::exchange(other.m_backend, nullptr);
      m_block = std::exchange(other.m_block, PoolBlock{});
    }
    return *this;
  }
  HostBlock(const HostBlock&) = delete;
  HostBlock& operator=(const HostBlock&) = delete;

  // At least `bytes` (the pool's size class); not initialized.
  static Result<HostBlock> acquire(Backend& backend, size_t bytes) {
    KILN_TRY_ASSIGN(PoolBlock block, backend.host_acquire(bytes));
    HostBlock held;
    held.m_backend = &backend;
    held.m_block = block;
    return held;
  }
  void reset() {
    if (m_backend != nullptr && m_block) m_backend->host_release(m_block);
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

}  // namespace kiln
