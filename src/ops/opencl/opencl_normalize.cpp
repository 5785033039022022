// The normalize family on OpenCL: upload, mean/std as small buffers, one launch over (x, y, image), download.
#include "opencl_normalize_source.h"
#include "ops/normalize.h"
#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

bool normalize_opencl_supports(const OpCall& /*call*/, const OpenclDevice& /*device*/) { return true; }

Status normalize_opencl(OpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const NormalizeParams*>(call.params);
  if (call.in.count == 0) return Status::ok();
  KILN_TRY_ASSIGN(cl_kernel kernel, ctx.kernel("normalize", normalize_program::kSource, "normalize_kernel"));
  CallBuffers buffers(ctx.pool, ctx.device(), ctx.queue);
  KILN_TRY_ASSIGN(DeviceBatch in, batch_upload(ctx, buffers, call.in));
  KILN_TRY_ASSIGN(DeviceBatch out, batch_alloc(ctx, buffers, call.out));
  KILN_TRY_ASSIGN(cl_mem mean, buffer_upload(ctx, buffers, params.mean.data(), sizeof(float) * params.mean.size(), "mean"));
  KILN_TRY_ASSIGN(cl_mem std_dev, buffer_upload(ctx, buffers, params.std.data(), sizeof(float) * params.std.size(), "std"));
  KILN_CL_CHECK(kernel_args_set(kernel, in.pixels, in.descs, out.pixels, out.descs, mean, std_dev));
  buffers.set_pending(true);
  KILN_TRY(launch_3d(ctx, kernel, static_cast<size_t>(out.max_width), static_cast<size_t>(out.max_height),
                     static_cast<size_t>(out.count)));
  return batch_download(ctx, out, call.out);
}

}  // namespace kiln::opencl
