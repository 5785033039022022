// Ops on CUDA: the backend's stream, the context every family's host code gets for one call, var-shape batches in
// device memory, and the op table: one supports/run pair per family (defined in <family>.cu next to its kernels and
// launch_<family>, render's host side in cuda_render.cpp). Host-compilable: .cpp files may include this.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "core/buffer_pool.h"
#include "kiln/device.h"
#include "kiln/ops.h"
#include "ops/cuda/pinned_staging.h"
#include "ops/image_px.h"

namespace kiln {

struct CudaOpContext;

// Device memory of one call from the backend's pool, and page-locked host copies of its small tables (so that their
// uploads are queued without waiting); synchronizes the stream before giving either back.
class CudaCallMemory {
 public:
  explicit CudaCallMemory(const CudaOpContext& ctx);
  ~CudaCallMemory();
  CudaCallMemory(const CudaCallMemory&) = delete;
  CudaCallMemory& operator=(const CudaCallMemory&) = delete;
  Result<void*> acquire(size_t bytes, const char* what);
  Result<void*> acquire_pinned(size_t bytes);

 private:
  BufferPool& m_pool;
  BufferPool& m_pinned_pool;
  cudaStream_t m_stream;
  std::vector<PoolBlock> m_blocks;
  std::vector<PoolBlock> m_pinned_blocks;
};

// A non-blocking CUDA stream and the events that time one call's stages on it.
class CudaStream final : public Stream {
 public:
  enum Event { kStart = 0, kUploaded, kRan, kDownloaded, kEventCount };

  explicit CudaStream(Backend& backend) : m_backend(backend) {}
  ~CudaStream() override;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  Status init(int32_t device);  // creates the stream and its events on `device`; the caller's device stays current

  Backend& backend() const override { return m_backend; }
  Status synchronize() override;
  void* native_handle() const override { return stream; }

  cudaStream_t stream = nullptr;
  cudaEvent_t events[kEventCount] = {};

 private:
  Backend& m_backend;
  int32_t m_device = 0;
};

// Host blocks handed out by the backend's host_acquire(): outputs that lie inside one are copied to directly.
class PinnedBlocks {
 public:
  void add(const PoolBlock& block);
  // The block starting at block.handle with its size filled in, or an empty block when it is not one of ours.
  PoolBlock remove(PoolBlock block);
  // True when [data, data + bytes) lies inside one block.
  bool contains(const void* data, size_t bytes) const;

 private:
  mutable std::mutex m_mutex;
  std::map<uintptr_t, size_t> m_blocks;  // pointer -> bytes
};

struct CudaOpContext {
  cudaStream_t stream;      // the call's
  BufferPool& device_pool;
  BufferPool& host_pool;    // pinned staging
  BufferPool& table_pool;   // pinned copies of the call's small tables (CudaCallMemory::acquire_pinned)
  const PinnedBlocks& pinned;
  PinnedStaging& staging;   // for host batches outside `pinned`
  CudaStream& timing;       // its events time the stages when `timings` is set
  OpTimings* timings;
};

// A var-shape batch on the device: image i starts at base + descs[i].offset. Host inputs are packed into one
// allocation (bytes long); device-space batches (MemorySpace::kDevice) are used in place (offsets relative to the
// lowest image pointer). Host batches in blocks of host_acquire() are copied from and to directly, others through a
// pinned staging slot (pinned_staging.h).
struct CudaDeviceBatch {
  uint8_t* base = nullptr;
  size_t bytes = 0;                      // host batches: the packed allocation's size
  const KilnImageDesc* descs = nullptr;  // device copy of host_descs
  std::vector<KilnImageDesc> host_descs;
  int64_t count = 0;
  int32_t max_width = 0;
  int32_t max_height = 0;
};

Result<CudaDeviceBatch> cuda_batch_upload(CudaOpContext& ctx, CudaCallMemory& memory, const VarShapeBatchView& in);
Result<CudaDeviceBatch> cuda_batch_alloc(CudaOpContext& ctx, CudaCallMemory& memory, const VarShapeBatchView& out);
// Copies a host-space `out` back from `batch` and synchronizes the stream (device-space: synchronize only).
Status cuda_batch_download(CudaOpContext& ctx, const CudaDeviceBatch& batch, const VarShapeBatchView& out);
// Backend::images_upload on CUDA: `host` into the same-shaped device-space images of `device`, on ctx.stream, which
// it synchronizes.
Status cuda_images_upload(CudaOpContext& ctx, const VarShapeBatchView& host, const VarShapeBatchView& device);
// A device copy of small per-call data (matrices, tables, image descriptors), queued on ctx.stream from a pinned
// copy of `data` without waiting: `data` may go away at once.
Result<void*> cuda_buffer_upload(CudaOpContext& ctx, CudaCallMemory& memory, const void* data, size_t bytes,
                                 const char* what);

// True when `call` runs a device batch in place (an output image is its input's memory).
bool cuda_in_place(const OpCall& call);

// A family's row of the CUDA op table.
struct CudaOp {
  OpKind op;
  bool (*supports)(const OpCall& call);
  Status (*run)(CudaOpContext& ctx, const OpCall& call);
};

// The CUDA row of `op`, or nullptr.
const CudaOp* cuda_op_find(OpKind op);

// A family's entry points on CUDA: <family>_cuda_supports and <family>_cuda (its row of the table).
#define KILN_CUDA_FAMILY(family)                    \
  bool family##_cuda_supports(const OpCall& call); \
  Status family##_cuda(CudaOpContext& ctx, const OpCall& call)

KILN_CUDA_FAMILY(render);
KILN_CUDA_FAMILY(resize);
KILN_CUDA_FAMILY(color);
KILN_CUDA_FAMILY(preprocess);
KILN_CUDA_FAMILY(normalize);
KILN_CUDA_FAMILY(quality);
KILN_CUDA_FAMILY(enhance);
KILN_CUDA_FAMILY(warp);
KILN_CUDA_FAMILY(mask);
KILN_CUDA_FAMILY(matte);
KILN_CUDA_FAMILY(probability);
KILN_CUDA_FAMILY(blur);

}  // namespace kiln
