// The enhance family on OpenCL: upload, the steps that run (each one launch over (x, y, image), PIL contrast's mean
// as a per-row then per-image reduction), download. Intermediate images stay on the device.
#include <vector>

#include "opencl_enhance_source.h"
#include "ops/enhance.h"
#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

namespace {

// The shapes of `like` as `type` images (for batch_alloc; the pixel pointers are not read).
std::vector<ImageView> shapes_as(const VarShapeBatchView& like, PixelType type) {
  std::vector<ImageView> views;
  for (int64_t i = 0; i < like.count; ++i) {
    ImageView v = like[i];
    v.type = type;
    v.row_stride = static_cast<int64_t>(v.pixel_size()) * v.width;
    views.push_back(v);
  }
  return views;
}

}  // namespace

bool enhance_opencl_supports(const OpCall& /*call*/, const OpenclDevice& /*device*/) {
  return true;  // every validated call (u8 HWC, 1/3/4 channels, any parameters)
}

Status enhance_opencl(OpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const EnhancePlan plan = enhance_plan(*static_cast<const EnhanceParams*>(call.params));
  const KilnEnhanceArgs args = plan.args;
  const bool contrast = (args.flags & KILN_ENHANCE_CONTRAST) != 0;
  const bool sharp = (args.flags & KILN_ENHANCE_SHARPNESS) != 0;
  const bool unsharp = (args.flags & KILN_ENHANCE_UNSHARP) != 0;
  const bool point = (args.flags & (KILN_ENHANCE_LUT | KILN_ENHANCE_CONTRAST)) != 0 || (!sharp && !unsharp);

  CallBuffers buffers(ctx.pool, ctx.device(), ctx.queue);
  KILN_TRY_ASSIGN(DeviceBatch in, batch_upload(ctx, buffers, call.in));
  KILN_TRY_ASSIGN(DeviceBatch out, batch_alloc(ctx, buffers, call.out));
  const size_t width = static_cast<size_t>(in.max_width);
  const size_t height = static_cast<size_t>(in.max_height);
  const size_t count = static_cast<size_t>(in.count);
  const DeviceBatch* cur = &in;
  DeviceBatch temp_a, temp_b;

  if (point) {
    KILN_TRY_ASSIGN(cl_mem lut, buffer_upload(ctx, buffers, plan.lut.data(), plan.lut.size(), "enhance table"));
    KILN_TRY_ASSIGN(cl_mem means, buffers.acquire(sizeof(cl_int) * count, "enhance means"));
    const cl_int max_height = in.max_height;
    if (contrast) {
      KILN_TRY_ASSIGN(cl_mem row_sums, buffers.acquire(sizeof(cl_long) * height * count, "enhance row sums"));
      KILN_TRY_ASSIGN(cl_kernel rows_kernel, ctx.kernel("enhance", enhance_program::kSource, "enhance_row_gray_kernel"));
      KILN_CL_CHECK(kernel_args_set(rows_kernel, in.pixels, in.descs, lut, args, row_sums, max_height));
      buffers.set_pending(true);
      KILN_TRY(launch_3d(ctx, rows_kernel, 1, height, count));
      KILN_TRY_ASSIGN(cl_kernel mean_kernel, ctx.kernel("enhance", enhance_program::kSource, "enhance_mean_kernel"));
      const cl_int n = static_cast<cl_int>(count);
      KILN_CL_CHECK(kernel_args_set(mean_kernel, in.descs, row_sums, max_height, means, n));
      KILN_TRY(launch_3d(ctx, mean_kernel, count, 1, 1));
    }
    DeviceBatch* dst = &out;
    if (sharp || unsharp) {
      KILN_TRY_ASSIGN(temp_a, batch_alloc(ctx, buffers, call.in));
      dst = &temp_a;
    }
    KILN_TRY_ASSIGN(cl_kernel kernel, ctx.kernel("enhance", enhance_program::kSource, "enhance_point_kernel"));
    KILN_CL_CHECK(kernel_args_set(kernel, cur->pixels, cur->descs, dst->pixels, dst->descs, lut, args, means));
    buffers.set_pending(true);
    KILN_TRY(launch_3d(ctx, kernel, width, height, count));
    cur = dst;
  }
  if (sharp) {
    DeviceBatch* dst = &out;
    if (unsharp) {
      KILN_TRY_ASSIGN(temp_b, batch_alloc(ctx, buffers, call.in));
      dst = &temp_b;
    }
    KILN_TRY_ASSIGN(cl_kernel kernel, ctx.kernel("enhance", enhance_program::kSource, "enhance_sharpness_kernel"));
    KILN_CL_CHECK(kernel_args_set(kernel, cur->pixels, cur->descs, dst->pixels, dst->descs, args));
    buffers.set_pending(true);
    KILN_TRY(launch_3d(ctx, kernel, width, height, count));
    cur = dst;
  }
  if (unsharp) {
    const std::vector<ImageView> row_views = shapes_as(call.in, PixelType::kF32);
    KILN_TRY_ASSIGN(DeviceBatch rows,
                    batch_alloc(ctx, buffers, VarShapeBatchView{row_views.data(), in.count, MemorySpace::kHost}));
    KILN_TRY_ASSIGN(cl_mem weights, buffer_upload(ctx, buffers, plan.weights.data(),
                                                  sizeof(float) * plan.weights.size(), "enhance gaussian"));
    KILN_TRY_ASSIGN(cl_kernel rows_kernel, ctx.kernel("enhance", enhance_program::kSource, "enhance_blur_rows_kernel"));
    KILN_CL_CHECK(kernel_args_set(rows_kernel, cur->pixels, cur->descs, rows.pixels, rows.descs, weights, args));
    buffers.set_pending(true);
    KILN_TRY(launch_3d(ctx, rows_kernel, width, height, count));
    KILN_TRY_ASSIGN(cl_kernel kernel, ctx.kernel("enhance", enhance_program::kSource, "enhance_unsharp_kernel"));
    KILN_CL_CHECK(kernel_args_set(kernel, cur->pixels, cur->descs, rows.pixels, rows.descs, out.pixels, out.descs,
                                  weights, args));
    KILN_TRY(launch_3d(ctx, kernel, width, height, count));
  }
  return batch_download(ctx, out, call.out);
}

}  // namespace kiln::opencl
