// The blur family on OpenCL: upload, shrink into a small temporary, the box passes between two of them, enlarge
// into the output (blur.cl around blur_px.h), download.
#include <vector>

#include "opencl_blur_source.h"
#include "ops/blur.h"
#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

bool blur_opencl_supports(const OpCall& call, const OpenclDevice& /*device*/) {
  return call.in.space == MemorySpace::kHost && call.out.space == MemorySpace::kHost;
}

Status blur_opencl(OpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const auto& params = *static_cast<const BlurParams*>(call.params);
  const KilnBlurArgs args = blur_args_resolve(params);
  CallBuffers buffers(ctx.pool, ctx.device(), ctx.queue);
  KILN_TRY_ASSIGN(DeviceBatch in, batch_upload(ctx, buffers, call.in));
  const std::vector<ImageView> small_views = blur_small_shapes(call.in, args.factor);
  const VarShapeBatchView small_shapes{small_views.data(), call.in.count, MemorySpace::kHost};
  KILN_TRY_ASSIGN(DeviceBatch a, batch_alloc(ctx, buffers, small_shapes));
  KILN_TRY_ASSIGN(DeviceBatch b, batch_alloc(ctx, buffers, small_shapes));
  KILN_TRY_ASSIGN(DeviceBatch out, batch_alloc(ctx, buffers, call.out));
  const auto count = static_cast<size_t>(call.in.count);
  const auto small_width = static_cast<size_t>(a.max_width), small_height = static_cast<size_t>(a.max_height);

  KILN_TRY_ASSIGN(cl_kernel shrink, ctx.kernel("blur", blur_program::kSource, "blur_shrink_kernel"));
  const cl_int factor = args.factor;
  KILN_CL_CHECK(kernel_args_set(shrink, in.pixels, in.descs, a.pixels, a.descs, factor));
  buffers.set_pending(true);
  KILN_TRY(launch_3d(ctx, shrink, small_width, small_height, count));
  KILN_TRY_ASSIGN(cl_kernel box, ctx.kernel("blur", blur_program::kSource, "blur_box_kernel"));
  for (int32_t pass = 0; pass < params.passes; ++pass) {
    const cl_int horizontal = 1, vertical = 0;
    KILN_CL_CHECK(kernel_args_set(box, a.pixels, a.descs, b.pixels, b.descs, args, horizontal));
    KILN_TRY(launch_3d(ctx, box, small_width, small_height, count));
    KILN_CL_CHECK(kernel_args_set(box, b.pixels, b.descs, a.pixels, a.descs, args, vertical));
    KILN_TRY(launch_3d(ctx, box, small_width, small_height, count));
  }
  KILN_TRY_ASSIGN(cl_kernel enlarge, ctx.kernel("blur", blur_program::kSource, "blur_enlarge_kernel"));
  KILN_CL_CHECK(kernel_args_set(enlarge, a.pixels, a.descs, out.pixels, out.descs));
  KILN_TRY(launch_3d(ctx, enlarge, static_cast<size_t>(out.max_width), static_cast<size_t>(out.max_height), count));
  return batch_download(ctx, out, call.out);
}

}  // namespace kiln::opencl
