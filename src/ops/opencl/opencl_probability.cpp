// The probability family on OpenCL: one kernel (probability.cl around probability_px.h) per call; a smoothed call
// uploads its output too (the previous maps).
#include "opencl_probability_source.h"
#include "ops/opencl/opencl_ops.h"
#include "ops/probability.h"

namespace kiln::opencl {

bool probability_opencl_supports(const OpCall& call, const OpenclDevice& /*device*/) {
  return call.in.space == MemorySpace::kHost && call.out.space == MemorySpace::kHost;
}

Status probability_opencl(OpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const KilnProbabilityParams p = probability_params_resolve(*static_cast<const ProbabilityParams*>(call.params));
  KILN_TRY_ASSIGN(cl_kernel kernel, ctx.kernel("probability", probability_program::kSource, "probability_kernel"));
  CallBuffers buffers(ctx.pool, ctx.device(), ctx.queue);
  KILN_TRY_ASSIGN(DeviceBatch in, batch_upload(ctx, buffers, call.in));
  KILN_TRY_ASSIGN(DeviceBatch out, p.smooth ? batch_upload(ctx, buffers, call.out) : batch_alloc(ctx, buffers, call.out));
  KILN_CL_CHECK(kernel_args_set(kernel, in.pixels, in.descs, out.pixels, out.descs, p));
  buffers.set_pending(true);
  KILN_TRY(launch_3d(ctx, kernel, static_cast<size_t>(out.max_width), static_cast<size_t>(out.max_height),
                     static_cast<size_t>(out.count)));
  KILN_TRY(batch_download(ctx, out, call.out));
  buffers.set_pending(false);
  return Status::ok();
}

}  // namespace kiln::opencl
