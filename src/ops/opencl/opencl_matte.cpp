// The matte family on OpenCL: one kernel (matte.cl around matte_px.h) per call.
#include "opencl_matte_source.h"
#include "ops/matte.h"
#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

bool matte_opencl_supports(const OpCall& call, const OpenclDevice& /*device*/) {
  return call.in.space == MemorySpace::kHost && call.out.space == MemorySpace::kHost;
}

Status matte_opencl(OpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const KilnMatteParams p = matte_params_resolve(*static_cast<const MatteParams*>(call.params));
  KILN_TRY_ASSIGN(cl_kernel kernel, ctx.kernel("matte", matte_program::kSource, "matte_kernel"));
  CallBuffers buffers(ctx.pool, ctx.device(), ctx.queue);
  KILN_TRY_ASSIGN(DeviceBatch in, batch_upload(ctx, buffers, call.in));
  KILN_TRY_ASSIGN(DeviceBatch out, batch_alloc(ctx, buffers, call.out));
  KILN_CL_CHECK(kernel_args_set(kernel, in.pixels, in.descs, out.pixels, out.descs, p));
  buffers.set_pending(true);
  KILN_TRY(launch_3d(ctx, kernel, static_cast<size_t>(out.max_width), static_cast<size_t>(out.max_height),
                     static_cast<size_t>(out.count)));
  KILN_TRY(batch_download(ctx, out, call.out));
  buffers.set_pending(false);
  matte_person_counts(call, p);
  return Status::ok();
}

}  // namespace kiln::opencl
