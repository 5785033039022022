// Image ops on CUDA: the per-thread context every family's host code gets, var-shape batches in device memory,
// and one supports/run pair per family (defined in <family>.cu next to its kernels and launch_<family>).
// Host-compilable: .cpp files may include this.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "core/buffer_pool.h"
#include "kiln/device.h"
#include "kiln/ops.h"
#include "ops/image_px.h"

namespace kiln {

// Device memory of one call from the backend's pool; synchronizes the stream before giving it back.
class CudaCallMemory {
 public:
  CudaCallMemory(BufferPool& pool, cudaStream_t stream) : m_pool(pool), m_stream(stream) {}
  ~CudaCallMemory();
  CudaCallMemory(const CudaCallMemory&) = delete;
  CudaCallMemory& operator=(const CudaCallMemory&) = delete;
  Result<void*> acquire(size_t bytes, const char* what);

 private:
  BufferPool& m_pool;
  cudaStream_t m_stream;
  std::vector<PoolBlock> m_blocks;
};

struct CudaOpContext {
  cudaStream_t stream;  // this thread's
  BufferPool& device_pool;
};

// A var-shape batch on the device: image i starts at base + descs[i].offset. Host inputs are packed into one
// allocation; device-space batches (MemorySpace::kDevice) are used in place (offsets relative to the lowest
// image pointer).
struct CudaDeviceBatch {
  uint8_t* base = nullptr;
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
// A device copy of small per-call data (matrices, rectangles).
Result<void*> cuda_buffer_upload(CudaOpContext& ctx, CudaCallMemory& memory, const void* data, size_t bytes,
                                 const char* what);

bool cuda_op_supports(const OpCall& call);
Status cuda_op_run(CudaOpContext& ctx, const OpCall& call);

bool resize_cuda_supports(const OpCall& call);
Status resize_cuda(CudaOpContext& ctx, const OpCall& call);
bool color_cuda_supports(const OpCall& call);
Status color_cuda(CudaOpContext& ctx, const OpCall& call);
bool preprocess_cuda_supports(const OpCall& call);
Status preprocess_cuda(CudaOpContext& ctx, const OpCall& call);
bool normalize_cuda_supports(const OpCall& call);
Status normalize_cuda(CudaOpContext& ctx, const OpCall& call);
bool quality_cuda_supports(const OpCall& call);
Status quality_cuda(CudaOpContext& ctx, const OpCall& call);
bool enhance_cuda_supports(const OpCall& call);
Status enhance_cuda(CudaOpContext& ctx, const OpCall& call);
bool warp_cuda_supports(const OpCall& call);
Status warp_cuda(CudaOpContext& ctx, const OpCall& call);
bool mask_cuda_supports(const OpCall& call);
Status mask_cuda(CudaOpContext& ctx, const OpCall& call);

}  // namespace kiln
