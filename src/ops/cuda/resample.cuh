// What resize and the fused preprocess share on CUDA: the host's sampling tables (resize_tables_build) uploaded
// with the batches, one kernel over every output pixel, the download. CUDA sources only (.cu).
#pragma once

#include "ops/cuda/per_pixel.cuh"
#include "ops/resize.h"

namespace kiln {

// A resampling kernel: batches, the tables, and the family's constants (the pad, or the normalization).
template <typename Consts>
using ResampleKernel = void (*)(const uint8_t*, const KilnImageDesc*, uint8_t*, const KilnImageDesc*,
                                const KilnResizeImage*, const int32_t*, const float*, Consts);

template <typename Consts>
Status resample_cuda(CudaOpContext& ctx, const OpCall& call, ResampleKernel<Consts> kernel, Interp interp,
                     ResizeFit fit, const RectI* rois, const Consts& consts) {
  if (call.in.count == 0) return Status::ok();
  ResizeTables tables;
  KILN_TRY(resize_tables_build(interp, fit, rois, call.in, call.out, &tables));
  CudaCallMemory memory(ctx);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  KILN_TRY_ASSIGN(CudaDeviceBatch out, cuda_batch_alloc(ctx, memory, call.out));
  KILN_TRY_ASSIGN(void* plans, cuda_buffer_upload(ctx, memory, tables.images.data(),
                                                  sizeof(KilnResizeImage) * tables.images.size(), "resize plans"));
  KILN_TRY_ASSIGN(void* index, cuda_buffer_upload(ctx, memory, tables.index.data(),
                                                  sizeof(int32_t) * tables.index.size(), "resize indices"));
  KILN_TRY_ASSIGN(void* weight, cuda_buffer_upload(ctx, memory, tables.weight.data(),
                                                   sizeof(float) * tables.weight.size(), "resize weights"));
  KILN_TRY(launch_per_output_pixel(kernel, out, ctx.stream, in.base, in.descs, out.base, out.descs,
                                   static_cast<const KilnResizeImage*>(plans), static_cast<const int32_t*>(index),
                                   static_cast<const float*>(weight), consts));
  return cuda_batch_download(ctx, out, call.out);
}

}  // namespace kiln
