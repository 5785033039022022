// The warp family on CUDA: warp_affine_kernel (one thread per output pixel, blockIdx.z = image), its launcher and
// the backend entry points. Same warp_px.h math as the CPU and OpenCL (--fmad=false: no contraction).
#include "ops/cuda/common.cuh"
#include "ops/cuda/cuda_ops.h"
#include "ops/warp.h"
#include "ops/warp_px.h"

namespace kiln {

namespace {

__global__ void warp_affine_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                                   const KilnImageDesc* out_descs, const float* matrices, int32_t mode, float b0,
                                   float b1, float b2, float b3) {
  const int32_t x = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  const int32_t y = static_cast<int32_t>(blockIdx.y * blockDim.y + threadIdx.y);
  const int32_t image = static_cast<int32_t>(blockIdx.z);
  const KilnImageDesc out = out_descs[image];
  if (x >= out.width || y >= out.height) return;
  kiln_warp_pixel(in_base, in_descs[image], out_base, out, matrices + 6 * image, mode, b0, b1, b2, b3, x, y);
}

Status launch_warp_affine(const CudaDeviceBatch& in, const CudaDeviceBatch& out, const float* matrices,
                          int32_t mode, const float border[4], cudaStream_t stream) {
  if (out.count == 0 || out.max_width == 0 || out.max_height == 0) return Status::ok();
  const dim3 block(32, 8, 1);
  const dim3 grid(ceil_div<uint32_t>(static_cast<uint32_t>(out.max_width), block.x),
                  ceil_div<uint32_t>(static_cast<uint32_t>(out.max_height), block.y), static_cast<uint32_t>(out.count));
  warp_affine_kernel<<<grid, block, 0, stream>>>(in.base, in.descs, out.base, out.descs, matrices, mode, border[0],
                                                 border[1], border[2], border[3]);
  KILN_CUDA_CHECK(cudaGetLastError());
  return Status::ok();
}

}  // namespace

bool warp_cuda_supports(const OpCall& call) {
  // In-place device batches would let threads read pixels others already wrote.
  if (call.in.count > 65535) return false;
  for (int64_t i = 0; i < call.in.count; ++i) {
    if (call.in.space == MemorySpace::kDevice && call.out.space == MemorySpace::kDevice &&
        call.in[i].data == call.out[i].data) {
      return false;
    }
  }
  return true;
}

Status warp_cuda(CudaOpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const WarpParams*>(call.params);
  if (call.in.count == 0) return Status::ok();
  const auto matrices = warp_source_matrices(params, call.in.count);
  CudaCallMemory memory(ctx.device_pool, ctx.stream);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  KILN_TRY_ASSIGN(CudaDeviceBatch out, cuda_batch_alloc(ctx, memory, call.out));
  KILN_TRY_ASSIGN(void* m, cuda_buffer_upload(ctx, memory, matrices.data(), sizeof(float) * 6 * matrices.size(),
                                              "warp matrices"));
  KILN_TRY(launch_warp_affine(in, out, static_cast<const float*>(m), static_cast<int32_t>(params.border),
                              params.border_value, ctx.stream));
  return cuda_batch_download(ctx, out, call.out);
}

}  // namespace kiln
