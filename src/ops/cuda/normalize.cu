// The normalize family on CUDA: normalize_kernel (one thread per pixel, blockIdx.z = image), its launcher and the
// backend entry points. Same normalize_px.h math as the CPU and OpenCL (no FMA: --fmad=false; IEEE division).
#include "ops/cuda/common.cuh"
#include "ops/cuda/cuda_ops.h"
#include "ops/normalize.h"
#include "ops/normalize_px.h"

namespace kiln {

namespace {

__global__ void normalize_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                                 const KilnImageDesc* out_descs, const float* mean, const float* std_dev) {
  const int32_t x = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  const int32_t y = static_cast<int32_t>(blockIdx.y * blockDim.y + threadIdx.y);
  const int32_t image = static_cast<int32_t>(blockIdx.z);
  const KilnImageDesc out = out_descs[image];
  if (x >= out.width || y >= out.height) return;
  kiln_normalize_pixel(in_base, in_descs[image], out_base, out, mean, std_dev, x, y);
}

Status launch_normalize(const CudaDeviceBatch& in, const CudaDeviceBatch& out, const float* mean,
                        const float* std_dev, cudaStream_t stream) {
  if (out.count == 0 || out.max_width == 0 || out.max_height == 0) return Status::ok();
  const dim3 block(32, 8, 1);
  const dim3 grid(ceil_div<uint32_t>(static_cast<uint32_t>(out.max_width), block.x),
                  ceil_div<uint32_t>(static_cast<uint32_t>(out.max_height), block.y), static_cast<uint32_t>(out.count));
  normalize_kernel<<<grid, block, 0, stream>>>(in.base, in.descs, out.base, out.descs, mean, std_dev);
  KILN_CUDA_CHECK(cudaGetLastError());
  return Status::ok();
}

}  // namespace

bool normalize_cuda_supports(const OpCall& call) { return call.in.count <= 65535; }

Status normalize_cuda(CudaOpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const NormalizeParams*>(call.params);
  if (call.in.count == 0) return Status::ok();
  CudaCallMemory memory(ctx.device_pool, ctx.stream);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  // In place on device batches: the output is the input's memory, each thread reads before it writes.
  KILN_TRY_ASSIGN(CudaDeviceBatch out, cuda_batch_alloc(ctx, memory, call.out));
  KILN_TRY_ASSIGN(void* mean, cuda_buffer_upload(ctx, memory, params.mean.data(), sizeof(float) * params.mean.size(), "mean"));
  KILN_TRY_ASSIGN(void* std_dev, cuda_buffer_upload(ctx, memory, params.std.data(), sizeof(float) * params.std.size(), "std"));
  KILN_TRY(launch_normalize(in, out, static_cast<const float*>(mean), static_cast<const float*>(std_dev), ctx.stream));
  return cuda_batch_download(ctx, out, call.out);
}

}  // namespace kiln
