// The warp family on OpenCL: upload, the destination -> source matrices as one buffer, one launch over
// (x, y, image), download.
#include "opencl_warp_source.h"
#include "ops/opencl/opencl_ops.h"
#include "ops/warp.h"

namespace kiln::opencl {

bool warp_opencl_supports(const OpCall& /*call*/, const OpenclDevice& /*device*/) { return true; }

Status warp_opencl(OpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const WarpParams*>(call.params);
  if (call.in.count == 0) return Status::ok();
  const auto matrices = warp_source_matrices(params, call.in.count);
  KILN_TRY_ASSIGN(cl_kernel kernel, ctx.kernel("warp", warp_program::kSource, "warp_affine_kernel"));
  CallBuffers buffers(ctx.pool, ctx.device(), ctx.queue);
  KILN_TRY_ASSIGN(DeviceBatch in, batch_upload(ctx, buffers, call.in));
  KILN_TRY_ASSIGN(DeviceBatch out, batch_alloc(ctx, buffers, call.out));
  KILN_TRY_ASSIGN(cl_mem m, buffer_upload(ctx, buffers, matrices.data(), sizeof(float) * 6 * matrices.size(), "warp matrices"));
  const cl_int mode = static_cast<cl_int>(params.border);
  const float* b = params.border_value;
  KILN_CL_CHECK(kernel_args_set(kernel, in.pixels, in.descs, out.pixels, out.descs, m, mode, b[0], b[1], b[2], b[3]));
  buffers.set_pending(true);
  KILN_TRY(launch_3d(ctx, kernel, static_cast<size_t>(out.max_width), static_cast<size_t>(out.max_height),
                     static_cast<size_t>(out.count)));
  return batch_download(ctx, out, call.out);
}

}  // namespace kiln::opencl
