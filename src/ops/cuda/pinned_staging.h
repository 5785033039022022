// Pinned staging for host batches that are not pinned already (decoded images, NumPy arrays): a ring of page-locked
// host blocks through which the CUDA ops copy them up and their outputs down. A copy from pageable memory goes through
// the driver's own small bounce buffer at a fraction of the bus's speed and holds the calling thread; from a pinned
// block it is one DMA that runs beside the host packing the next image and beside other calls' kernels. Slots are
// lent one call at a time and at most kPinnedStagingSlots exist, so the page-locked memory stays bounded (a call
// past the limit waits for a slot); each remembers the copies that last used it and is not refilled before they end.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/buffer_pool.h"
#include "core/lending_pool.h"
#include "kiln/status.h"

namespace kiln {

// Calls that stage at once; more wait. Four keeps a copy, a kernel and a download of different calls in flight.
inline constexpr int64_t kPinnedStagingSlots = 4;

class PinnedSlot {
 public:
  PinnedSlot(BufferPool& pinned_pool, int32_t device) : m_pool(pinned_pool), m_device(device) {}
  ~PinnedSlot();
  PinnedSlot(const PinnedSlot&) = delete;
  PinnedSlot& operator=(const PinnedSlot&) = delete;
  Status init();  // creates the slot's event

  // The slot's memory, at least `bytes`, once no copy queued on it is still running.
  Result<uint8_t*> ready(size_t bytes);
  // The copies queued on `stream` so far read or write the slot: the next ready() waits for them.
  Status used_by(cudaStream_t stream);
  size_t bytes() const { return m_block.bytes; }

 private:
  BufferPool& m_pool;
  int32_t m_device;
  PoolBlock m_block;
  cudaEvent_t m_copied = nullptr;
  bool m_pending = false;
};

using PinnedStaging = LendingPool<PinnedSlot>;

// Host rows [0, rows) of `width` bytes from one pitch to another (one memcpy when both are packed).
void host_rows_copy(uint8_t* dst, size_t dst_pitch, const uint8_t* src, size_t src_pitch, size_t width, size_t rows);

}  // namespace kiln
