#include "ops/cuda/pinned_staging.h"

#include <cstring>

#include "ops/cuda/common.cuh"
#include "ops/cuda/current_device.h"

namespace kiln {

PinnedSlot::~PinnedSlot() {
  const CurrentDevice current(m_device);
  if (m_copied != nullptr) {
    if (m_pending) (void)cudaEventSynchronize(m_copied);
    (void)cudaEventDestroy(m_copied);
  }
  if (m_block) m_pool.release(m_block);
}

Status PinnedSlot::init() {
  const CurrentDevice current(m_device);
  KILN_CUDA_CHECK(current.status());
  KILN_CUDA_CHECK(cudaEventCreateWithFlags(&m_copied, cudaEventDisableTiming));
  return Status::ok();
}

Result<uint8_t*> PinnedSlot::ready(size_t bytes) {
  if (m_pending) {
    KILN_CUDA_CHECK(cudaEventSynchronize(m_copied));
    m_pending = false;
  }
  if (m_block.bytes < bytes) {
    if (m_block) m_pool.release(m_block);
    m_block = PoolBlock{};
    KILN_TRY_ASSIGN(m_block, m_pool.acquire(bytes));
  }
  return reinterpret_cast<uint8_t*>(m_block.handle);
}

Status PinnedSlot::used_by(cudaStream_t stream) {
  KILN_CUDA_CHECK(cudaEventRecord(m_copied, stream));
  m_pending = true;
  return Status::ok();
}

void host_rows_copy(uint8_t* dst, size_t dst_pitch, const uint8_t* src, size_t src_pitch, size_t width,
                    size_t rows) {
  if (dst_pitch == width && src_pitch == width) {
    std::memcpy(dst, src, width * rows);
    return;
  }
  for (size_t y = 0; y < rows; ++y) std::memcpy(dst + y * dst_pitch, src + y * src_pitch, width);
}

}  // namespace kiln
