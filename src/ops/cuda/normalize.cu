// The normalize family on CUDA: normalize_kernel (one thread per pixel, blockIdx.z = image) and the backend entry
// points. Same normalize_px.h math as the CPU and OpenCL (no FMA: --fmad=false; IEEE division).
#include "ops/cuda/per_pixel.cuh"
#include "ops/normalize.h"
#include "ops/normalize_px.h"

namespace kiln {

namespace {

__global__ void normalize_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                                 const KilnImageDesc* out_descs, const float* mean, const float* std_dev) {
  int32_t x, y, image;
  KilnImageDesc out;
  for (bool on = output_pixel(out_descs, &x, &y, &image, &out); on; on = output_pixel_next(out, &y)) {
    kiln_normalize_pixel(in_base, in_descs[image], out_base, out, mean, std_dev, x, y);
  }
}

}  // namespace

bool normalize_cuda_supports(const OpCall& call) { return call.in.count <= 65535; }

Status normalize_cuda(CudaOpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const NormalizeParams*>(call.params);
  if (call.in.count == 0) return Status::ok();
  CudaCallMemory memory(ctx);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  // In place on device batches: the output is the input's memory, each thread reads before it writes.
  KILN_TRY_ASSIGN(CudaDeviceBatch out, cuda_batch_alloc(ctx, memory, call.out));
  KILN_TRY_ASSIGN(void* mean, cuda_buffer_upload(ctx, memory, params.mean.data(), sizeof(float) * params.mean.size(), "mean"));
  KILN_TRY_ASSIGN(void* std_dev, cuda_buffer_upload(ctx, memory, params.std.data(), sizeof(float) * params.std.size(), "std"));
  KILN_TRY(launch_per_output_pixel(normalize_kernel, out, ctx.stream, in.base, in.descs, out.base, out.descs,
                                   static_cast<const float*>(mean), static_cast<const float*>(std_dev)));
  return cuda_batch_download(ctx, out, call.out);
}

}  // namespace kiln
