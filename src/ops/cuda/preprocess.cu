// The preprocess family on CUDA: preprocess_kernel (one thread per output pixel, blockIdx.z = image),
// launch_preprocess and the backend entry points. Sampling tables from resize_plan_make; the math is
// kiln_preprocess_pixel (preprocess_px.h), the same as the CPU and OpenCL.
#include "ops/cuda/common.cuh"
#include "ops/cuda/cuda_ops.h"
#include "ops/preprocess.h"
#include "ops/preprocess_px.h"

namespace kiln {

namespace {

__global__ void preprocess_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                                  const KilnImageDesc* out_descs, const KilnResizeImage* plans, const int32_t* index,
                                  const float* weight, KilnPreprocessConsts consts) {
  const int32_t x = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  const int32_t y = static_cast<int32_t>(blockIdx.y * blockDim.y + threadIdx.y);
  const int32_t image = static_cast<int32_t>(blockIdx.z);
  const KilnImageDesc out = out_descs[image];
  if (x >= out.width || y >= out.height) return;
  kiln_preprocess_pixel(in_base, in_descs[image], out_base, out, plans[image], index, weight, consts, x, y);
}

Status launch_preprocess(const CudaDeviceBatch& in, const CudaDeviceBatch& out, const KilnResizeImage* plans,
                         const int32_t* index, const float* weight, const KilnPreprocessConsts& consts,
                         cudaStream_t stream) {
  if (out.count == 0 || out.max_width == 0 || out.max_height == 0) return Status::ok();
  const dim3 block(32, 8, 1);
  const dim3 grid(ceil_div<uint32_t>(static_cast<uint32_t>(out.max_width), block.x),
                  ceil_div<uint32_t>(static_cast<uint32_t>(out.max_height), block.y), static_cast<uint32_t>(out.count));
  preprocess_kernel<<<grid, block, 0, stream>>>(in.base, in.descs, out.base, out.descs, plans, index, weight,
                                                consts);
  KILN_CUDA_CHECK(cudaGetLastError());
  return Status::ok();
}

}  // namespace

bool preprocess_cuda_supports(const OpCall& call) {
  return call.params != nullptr && call.in.count <= 65535;  // u8 in, f32/f16 out: never in place
}

Status preprocess_cuda(CudaOpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const auto& params = *static_cast<const PreprocessParams*>(call.params);
  ResizeTables tables;
  KILN_TRY(resize_tables_build(params.interp, params.fit, nullptr, call.in, call.out, &tables));
  const KilnPreprocessConsts consts = preprocess_consts(params);

  CudaCallMemory memory(ctx.device_pool, ctx.stream);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  KILN_TRY_ASSIGN(CudaDeviceBatch out, cuda_batch_alloc(ctx, memory, call.out));
  KILN_TRY_ASSIGN(void* plans, cuda_buffer_upload(ctx, memory, tables.images.data(),
                                                  sizeof(KilnResizeImage) * tables.images.size(), "resize plans"));
  KILN_TRY_ASSIGN(void* index, cuda_buffer_upload(ctx, memory, tables.index.data(),
                                                  sizeof(int32_t) * tables.index.size(), "resize indices"));
  KILN_TRY_ASSIGN(void* weight, cuda_buffer_upload(ctx, memory, tables.weight.data(),
                                                   sizeof(float) * tables.weight.size(), "resize weights"));
  KILN_TRY(launch_preprocess(in, out, static_cast<const KilnResizeImage*>(plans), static_cast<const int32_t*>(index),
                             static_cast<const float*>(weight), consts, ctx.stream));
  return cuda_batch_download(ctx, out, call.out);
}

}  // namespace kiln
