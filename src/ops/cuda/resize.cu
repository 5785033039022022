// The resize family on CUDA: resize_kernel (one thread per output pixel, blockIdx.z = image), launch_resize and
// the backend entry points. The host builds the sampling tables (resize_plan_make); the math is
// kiln_resize_pixel (resize_px.h), the same as the CPU and OpenCL.
#include "ops/cuda/common.cuh"
#include "ops/cuda/cuda_ops.h"
#include "ops/resize.h"
#include "ops/resize_px.h"

namespace kiln {

namespace {

__global__ void resize_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                              const KilnImageDesc* out_descs, const KilnResizeImage* plans, const int32_t* index,
                              const float* weight, KilnResizePad pad) {
  const int32_t x = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  const int32_t y = static_cast<int32_t>(blockIdx.y * blockDim.y + threadIdx.y);
  const int32_t image = static_cast<int32_t>(blockIdx.z);
  const KilnImageDesc out = out_descs[image];
  if (x >= out.width || y >= out.height) return;
  kiln_resize_pixel(in_base, in_descs[image], out_base, out, plans[image], index, weight, pad, x, y);
}

Status launch_resize(const CudaDeviceBatch& in, const CudaDeviceBatch& out, const KilnResizeImage* plans,
                     const int32_t* index, const float* weight, KilnResizePad pad, cudaStream_t stream) {
  if (out.count == 0 || out.max_width == 0 || out.max_height == 0) return Status::ok();
  const dim3 block(32, 8, 1);
  const dim3 grid(ceil_div<uint32_t>(static_cast<uint32_t>(out.max_width), block.x),
                  ceil_div<uint32_t>(static_cast<uint32_t>(out.max_height), block.y), static_cast<uint32_t>(out.count));
  resize_kernel<<<grid, block, 0, stream>>>(in.base, in.descs, out.base, out.descs, plans, index, weight, pad);
  KILN_CUDA_CHECK(cudaGetLastError());
  return Status::ok();
}

}  // namespace

bool resize_cuda_supports(const OpCall& call) {
  if (call.params == nullptr || call.in.count > 65535) return false;
  // Not in place: outputs are written while other threads still read the inputs.
  if (call.in.space == MemorySpace::kDevice && call.out.space == MemorySpace::kDevice) {
    for (int64_t i = 0; i < call.in.count; ++i) {
      if (call.in[i].data == call.out[i].data) return false;
    }
  }
  return true;
}

Status resize_cuda(CudaOpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const auto& params = *static_cast<const ResizeParams*>(call.params);
  ResizeTables tables;
  KILN_TRY(resize_tables_build(params.interp, params.fit, params.rois, call.in, call.out, &tables));
  KilnResizePad pad{};
  for (int c = 0; c < 4; ++c) pad.v[c] = params.pad[c];

  CudaCallMemory memory(ctx.device_pool, ctx.stream);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  KILN_TRY_ASSIGN(CudaDeviceBatch out, cuda_batch_alloc(ctx, memory, call.out));
  KILN_TRY_ASSIGN(void* plans, cuda_buffer_upload(ctx, memory, tables.images.data(),
                                                  sizeof(KilnResizeImage) * tables.images.size(), "resize plans"));
  KILN_TRY_ASSIGN(void* index, cuda_buffer_upload(ctx, memory, tables.index.data(),
                                                  sizeof(int32_t) * tables.index.size(), "resize indices"));
  KILN_TRY_ASSIGN(void* weight, cuda_buffer_upload(ctx, memory, tables.weight.data(),
                                                   sizeof(float) * tables.weight.size(), "resize weights"));
  KILN_TRY(launch_resize(in, out, static_cast<const KilnResizeImage*>(plans), static_cast<const int32_t*>(index),
                         static_cast<const float*>(weight), pad, ctx.stream));
  return cuda_batch_download(ctx, out, call.out);
}

}  // namespace kiln
