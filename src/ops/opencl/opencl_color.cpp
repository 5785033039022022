// The color family on OpenCL: upload, one launch over (x, y, image), download.
#include "opencl_color_source.h"
#include "ops/color.h"
#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

bool color_opencl_supports(const OpCall& /*call*/, const OpenclDevice& /*device*/) {
  return true;  // every validated call: u8/f16/f32, any layout, any conversion
}

Status color_opencl(OpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const ColorParams*>(call.params);
  if (call.in.count == 0) return Status::ok();
  KILN_TRY_ASSIGN(cl_kernel kernel, ctx.kernel("color", color_program::kSource, "color_kernel"));
  CallBuffers buffers(ctx.pool, ctx.device(), ctx.queue);
  KILN_TRY_ASSIGN(DeviceBatch in, batch_upload(ctx, buffers, call.in));
  KILN_TRY_ASSIGN(DeviceBatch out, batch_alloc(ctx, buffers, call.out));
  const cl_int conversion = static_cast<cl_int>(params.conversion);
  const KilnYuvConsts yuv = color_yuv_consts(params);
  KILN_CL_CHECK(kernel_args_set(kernel, in.pixels, in.descs, out.pixels, out.descs, conversion, yuv));
  buffers.set_pending(true);
  KILN_TRY(launch_3d(ctx, kernel, static_cast<size_t>(out.max_width), static_cast<size_t>(out.max_height),
                     static_cast<size_t>(out.count)));
  return batch_download(ctx, out, call.out);
}

}  // namespace kiln::opencl
