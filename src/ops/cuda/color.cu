// The color family on CUDA: color_kernel (one thread per output pixel, blockIdx.z = image), its launcher and the
// backend entry points. Same color_px.h math as the CPU and OpenCL.
#include "ops/color.h"
#include "ops/color_px.h"
#include "ops/cuda/common.cuh"
#include "ops/cuda/cuda_ops.h"

namespace kiln {

namespace {

__global__ void color_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                             const KilnImageDesc* out_descs, int32_t conversion) {
  const int32_t x = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  const int32_t y = static_cast<int32_t>(blockIdx.y * blockDim.y + threadIdx.y);
  const int32_t image = static_cast<int32_t>(blockIdx.z);
  const KilnImageDesc out = out_descs[image];
  if (x >= out.width || y >= out.height) return;
  kiln_color_pixel(in_base, in_descs[image], out_base, out, conversion, x, y);
}

Status launch_color(const CudaDeviceBatch& in, const CudaDeviceBatch& out, int32_t conversion, cudaStream_t stream) {
  if (out.count == 0 || out.max_width == 0 || out.max_height == 0) return Status::ok();
  const dim3 block(32, 8, 1);
  const dim3 grid(ceil_div<uint32_t>(static_cast<uint32_t>(out.max_width), block.x),
                  ceil_div<uint32_t>(static_cast<uint32_t>(out.max_height), block.y), static_cast<uint32_t>(out.count));
  color_kernel<<<grid, block, 0, stream>>>(in.base, in.descs, out.base, out.descs, conversion);
  KILN_CUDA_CHECK(cudaGetLastError());
  return Status::ok();
}

}  // namespace

bool color_cuda_supports(const OpCall& call) {
  if (call.in.count > 65535) return false;
  // In place on device batches works for swap_rb only (each thread reads its pixel before writing it).
  const auto& params = *static_cast<const ColorParams*>(call.params);
  if (params.conversion == ColorConversion::kSwapRB) return true;
  for (int64_t i = 0; i < call.in.count; ++i) {
    if (call.in.space == MemorySpace::kDevice && call.out.space == MemorySpace::kDevice &&
        call.in[i].data == call.out[i].data) {
      return false;
    }
  }
  return true;
}

Status color_cuda(CudaOpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const ColorParams*>(call.params);
  if (call.in.count == 0) return Status::ok();
  CudaCallMemory memory(ctx.device_pool, ctx.stream);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  KILN_TRY_ASSIGN(CudaDeviceBatch out, cuda_batch_alloc(ctx, memory, call.out));
  KILN_TRY(launch_color(in, out, static_cast<int32_t>(params.conversion), ctx.stream));
  return cuda_batch_download(ctx, out, call.out);
}

}  // namespace kiln
