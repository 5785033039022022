// The color family on CUDA: color_kernel (one thread per output pixel, blockIdx.z = image) and the backend entry
// points. Same color_px.h math as the CPU and OpenCL.
#include "ops/color.h"
#include "ops/color_px.h"
#include "ops/cuda/per_pixel.cuh"

namespace kiln {

namespace {

__global__ void color_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                             const KilnImageDesc* out_descs, int32_t conversion, KilnYuvConsts yuv) {
  int32_t x, y, image;
  KilnImageDesc out;
  for (bool on = output_pixel(out_descs, &x, &y, &image, &out); on; on = output_pixel_next(out, &y)) {
    kiln_color_pixel(in_base, in_descs[image], out_base, out, conversion, yuv, x, y);
  }
}

}  // namespace

bool color_cuda_supports(const OpCall& call) {
  if (call.in.count > 65535) return false;
  // In place on device batches works for swap_rb only (each thread reads its pixel before writing it).
  const auto& params = *static_cast<const ColorParams*>(call.params);
  return params.conversion == ColorConversion::kSwapRB || !cuda_in_place(call);
}

Status color_cuda(CudaOpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const ColorParams*>(call.params);
  if (call.in.count == 0) return Status::ok();
  CudaCallMemory memory(ctx);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  KILN_TRY_ASSIGN(CudaDeviceBatch out, cuda_batch_alloc(ctx, memory, call.out));
  KILN_TRY(launch_per_output_pixel(color_kernel, out, ctx.stream, in.base, in.descs, out.base, out.descs,
                                   static_cast<int32_t>(params.conversion), color_yuv_consts(params)));
  return cuda_batch_download(ctx, out, call.out);
}

}  // namespace kiln
