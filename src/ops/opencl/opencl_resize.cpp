// Resize on OpenCL: the host builds each image's sampling tables (resize_plan_make), uploads them with the batch
// and runs resize_kernel (resize.cl) over every output pixel.
#include "opencl_resize_source.h"
#include "ops/opencl/opencl_ops.h"
#include "ops/resize.h"

namespace kiln::opencl {

// The resize program's source; the preprocess program is built from it followed by preprocess.cl.
const char* resize_opencl_source() { return resize_program::kSource; }

bool resize_opencl_supports(const OpCall& call, const OpenclDevice& /*device*/) {
  return call.params != nullptr;  // every interpolation, fit, type (u8, f32) and layout
}

Status resize_opencl(OpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const auto& params = *static_cast<const ResizeParams*>(call.params);
  ResizeTables tables;
  KILN_TRY(resize_tables_build(params.interp, params.fit, params.rois, call.in, call.out, &tables));
  KilnResizePad pad{};
  for (int c = 0; c < 4; ++c) pad.v[c] = params.pad[c];

  KILN_TRY_ASSIGN(cl_kernel kernel, ctx.kernel("resize", resize_opencl_source(), "resize_kernel"));
  CallBuffers buffers(ctx.pool, ctx.device(), ctx.queue);
  KILN_TRY_ASSIGN(DeviceBatch in, batch_upload(ctx, buffers, call.in));
  KILN_TRY_ASSIGN(DeviceBatch out, batch_alloc(ctx, buffers, call.out));
  KILN_TRY_ASSIGN(cl_mem plans, buffer_upload(ctx, buffers, tables.images.data(),
                                              sizeof(KilnResizeImage) * tables.images.size(), "resize plans"));
  KILN_TRY_ASSIGN(cl_mem index, buffer_upload(ctx, buffers, tables.index.data(),
                                              sizeof(int32_t) * tables.index.size(), "resize indices"));
  KILN_TRY_ASSIGN(cl_mem weight, buffer_upload(ctx, buffers, tables.weight.data(),
                                               sizeof(float) * tables.weight.size(), "resize weights"));
  KILN_CL_CHECK(kernel_args_set(kernel, in.pixels, in.descs, out.pixels, out.descs, plans, index, weight, pad));
  buffers.set_pending(true);
  KILN_TRY(launch_3d(ctx, kernel, static_cast<size_t>(out.max_width), static_cast<size_t>(out.max_height),
                     static_cast<size_t>(call.out.count)));
  KILN_TRY(batch_download(ctx, out, call.out));
  buffers.set_pending(false);
  return Status::ok();
}

}  // namespace kiln::opencl
