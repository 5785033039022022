// Kernels with one thread per output pixel of a var-shape batch (blockIdx.z = image): the thread's pixels, and the
// launch over the largest output. CUDA sources only (.cu).
#pragma once

#include <cuda_runtime.h>

#include "ops/cuda/common.cuh"
#include "ops/cuda/cuda_ops.h"

namespace kiln {

// The first output pixel (x, y) of image blockIdx.z this thread computes, and that image's descriptor; false when the
// thread falls outside the image (images of a batch differ in size). Grid y holds at most 65,535 blocks, so a thread
// goes on to the rows output_pixel_next gives it:
//   for (bool on = output_pixel(descs, &x, &y, &image, &out); on; on = output_pixel_next(out, &y)) { ... }
__device__ inline bool output_pixel(const KilnImageDesc* out_descs, int32_t* x, int32_t* y, int32_t* image,
                                    KilnImageDesc* out) {
  *x = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  *y = static_cast<int32_t>(blockIdx.y * blockDim.y + threadIdx.y);
  *image = static_cast<int32_t>(blockIdx.z);
  *out = out_descs[*image];
  return *x < out->width && *y < out->height;
}

// The thread's next row of `out`, a grid's height of rows further; false past the image.
__device__ inline bool output_pixel_next(const KilnImageDesc& out, int32_t* y) {
  const int64_t next = static_cast<int64_t>(*y) + static_cast<int64_t>(gridDim.y) * blockDim.y;
  if (next >= out.height) return false;
  *y = static_cast<int32_t>(next);
  return true;
}

// Enqueues `kernel(args...)` on `stream` with 32x8 blocks over the largest image of `out` (its rows looped past
// grid y's limit), one grid layer per image; nothing for an empty batch.
template <typename Kernel, typename... Args>
Status launch_per_output_pixel(Kernel kernel, const CudaDeviceBatch& out, cudaStream_t stream, Args... args) {
  if (out.count == 0 || out.max_width == 0 || out.max_height == 0) return Status::ok();
  const dim3 block(32, 8, 1);
  const dim3 grid(ceil_div<uint32_t>(static_cast<uint32_t>(out.max_width), block.x),
                  grid_rows(out.max_height, static_cast<int32_t>(block.y)), static_cast<uint32_t>(out.count));
  kernel<<<grid, block, 0, stream>>>(args...);
  KILN_CUDA_CHECK(cudaGetLastError());
  return Status::ok();
}

}  // namespace kiln
