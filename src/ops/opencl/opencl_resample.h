// What resize and the fused preprocess share on OpenCL: the host's sampling tables (resize_tables_build)
// uploaded with the batches, one kernel over every output pixel, the download.
#pragma once

#include "ops/opencl/opencl_ops.h"
#include "ops/resize.h"

namespace kiln::opencl {

// `kernel` takes the batches, the tables and the family's constants (the pad, or the normalization).
template <typename Consts>
Status resample_opencl(OpContext& ctx, const OpCall& call, cl_kernel kernel, Interp interp, ResizeFit fit,
                       const RectI* rois, const Consts& consts) {
  if (call.in.count == 0) return Status::ok();
  ResizeTables tables;
  KILN_TRY(resize_tables_build(interp, fit, rois, call.in, call.out, &tables));
  CallBuffers buffers(ctx.pool, ctx.device(), ctx.queue);
  KILN_TRY_ASSIGN(DeviceBatch in, batch_upload(ctx, buffers, call.in));
  KILN_TRY_ASSIGN(DeviceBatch out, batch_alloc(ctx, buffers, call.out));
  KILN_TRY_ASSIGN(cl_mem plans, buffer_upload(ctx, buffers, tables.images.data(),
                                              sizeof(KilnResizeImage) * tables.images.size(), "resize plans"));
  KILN_TRY_ASSIGN(cl_mem index, buffer_upload(ctx, buffers, tables.index.data(),
                                              sizeof(int32_t) * tables.index.size(), "resize indices"));
  KILN_TRY_ASSIGN(cl_mem weight, buffer_upload(ctx, buffers, tables.weight.data(),
                                               sizeof(float) * tables.weight.size(), "resize weights"));
  KILN_CL_CHECK(kernel_args_set(kernel, in.pixels, in.descs, out.pixels, out.descs, plans, index, weight, consts));
  buffers.set_pending(true);
  KILN_TRY(launch_3d(ctx, kernel, static_cast<size_t>(out.max_width), static_cast<size_t>(out.max_height),
                     static_cast<size_t>(call.out.count)));
  KILN_TRY(batch_download(ctx, out, call.out));
  buffers.set_pending(false);
  return Status::ok();
}

}  // namespace kiln::opencl
