// The warp family on CUDA: warp_affine_kernel (one thread per output pixel, blockIdx.z = image) and the backend
// entry points. Same warp_px.h math as the CPU and OpenCL (--fmad=false: no contraction).
#include "ops/cuda/per_pixel.cuh"
#include "ops/warp.h"
#include "ops/warp_px.h"

namespace kiln {

namespace {

__global__ void warp_affine_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                                   const KilnImageDesc* out_descs, const float* matrices, int32_t mode, float b0,
                                   float b1, float b2, float b3) {
  int32_t x, y, image;
  KilnImageDesc out;
  for (bool on = output_pixel(out_descs, &x, &y, &image, &out); on; on = output_pixel_next(out, &y)) {
    kiln_warp_pixel(in_base, in_descs[image], out_base, out, matrices + 6 * image, mode, b0, b1, b2, b3, x, y);
  }
}

}  // namespace

// In-place device batches would let threads read pixels others already wrote.
bool warp_cuda_supports(const OpCall& call) { return call.in.count <= 65535 && !cuda_in_place(call); }

Status warp_cuda(CudaOpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const WarpParams*>(call.params);
  if (call.in.count == 0) return Status::ok();
  const auto matrices = warp_source_matrices(params, call.in.count);
  CudaCallMemory memory(ctx);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  KILN_TRY_ASSIGN(CudaDeviceBatch out, cuda_batch_alloc(ctx, memory, call.out));
  KILN_TRY_ASSIGN(void* m, cuda_buffer_upload(ctx, memory, matrices.data(), sizeof(float) * 6 * matrices.size(),
                                              "warp matrices"));
  const float* b = params.border_value;
  KILN_TRY(launch_per_output_pixel(warp_affine_kernel, out, ctx.stream, in.base, in.descs, out.base, out.descs,
                                   static_cast<const float*>(m), static_cast<int32_t>(params.border), b[0], b[1],
                                   b[2], b[3]));
  return cuda_batch_download(ctx, out, call.out);
}

}  // namespace kiln
