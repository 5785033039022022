// The matte family on OpenCL: one kernel (matte.cl around matte_px.h) per call, counting person pixels in the kernel
// when asked for.
#include <vector>

#include "opencl_matte_source.h"
#include "ops/matte.h"
#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

bool matte_opencl_supports(const OpCall& call, const OpenclDevice& /*device*/) {
  return call.in.space == MemorySpace::kHost && call.out.space == MemorySpace::kHost;
}

Status matte_opencl(OpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const auto& params = *static_cast<const MatteParams*>(call.params);
  const KilnMatteParams p = matte_params_resolve(params);
  KILN_TRY_ASSIGN(cl_kernel kernel, ctx.kernel("matte", matte_program::kSource, "matte_kernel"));
  CallBuffers buffers(ctx.pool, ctx.device(), ctx.queue);
  KILN_TRY_ASSIGN(DeviceBatch in, batch_upload(ctx, buffers, call.in));
  DeviceBatch frames, backs;
  if (p.composite) {
    KILN_TRY_ASSIGN(frames, batch_upload(ctx, buffers, VarShapeBatchView{params.frames, call.in.count}));
    KILN_TRY_ASSIGN(backs, batch_upload(ctx, buffers, VarShapeBatchView{params.backgrounds, call.in.count}));
  }
  KILN_TRY_ASSIGN(DeviceBatch out, batch_alloc(ctx, buffers, call.out));
  const size_t count_bytes = static_cast<size_t>(call.in.count) * sizeof(cl_int);
  KILN_TRY_ASSIGN(cl_mem counts, buffers.acquire(count_bytes, "matte person counts"));
  std::vector<cl_int> host_counts(static_cast<size_t>(call.in.count), 0);
  const cl_int count_on = call.results != nullptr ? 1 : 0;
  if (count_on) {
    KILN_CL_CHECK(clEnqueueWriteBuffer(ctx.queue, counts, CL_TRUE, 0, count_bytes, host_counts.data(), 0, nullptr,
                                       nullptr));
  }
  // Masks and alphas pass the input in the composite's places (never read).
  KILN_CL_CHECK(kernel_args_set(kernel, in.pixels, in.descs, out.pixels, out.descs, p,
                                p.composite ? frames.pixels : in.pixels, p.composite ? frames.descs : in.descs,
                                p.composite ? backs.pixels : in.pixels, p.composite ? backs.descs : in.descs, counts,
                                count_on));
  buffers.set_pending(true);
  KILN_TRY(launch_3d(ctx, kernel, static_cast<size_t>(out.max_width), static_cast<size_t>(out.max_height),
                     static_cast<size_t>(out.count)));
  KILN_TRY(batch_download(ctx, out, call.out));
  if (count_on) {
    KILN_CL_CHECK(clEnqueueReadBuffer(ctx.queue, counts, CL_TRUE, 0, count_bytes, host_counts.data(), 0, nullptr,
                                      nullptr));
    auto* results = static_cast<int64_t*>(call.results);
    for (size_t i = 0; i < host_counts.size(); ++i) results[i] = host_counts[i];
  }
  buffers.set_pending(false);
  return Status::ok();
}

}  // namespace kiln::opencl
