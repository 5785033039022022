// The mask family on OpenCL: decide and smoothing passes on the device (mask.cl around mask_px.h); the
// largest-component filter runs on the host after the download (mask_largest_component, as on the CPU).
#include "opencl_mask_source.h"
#include "ops/mask.h"
#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

namespace {

constexpr int32_t kPassMedian = 0;
constexpr int32_t kPassErode = 1;
constexpr int32_t kPassDilate = 2;

Status smooth_pass(OpContext& ctx, cl_kernel kernel, const DeviceBatch& src, const DeviceBatch& dst, int32_t pass,
                   int32_t radius) {
  KILN_CL_CHECK(kernel_args_set(kernel, src.pixels, src.descs, dst.pixels, dst.descs, pass, radius));
  return launch_3d(ctx, kernel, static_cast<size_t>(dst.max_width), static_cast<size_t>(dst.max_height),
                   static_cast<size_t>(dst.count));
}

}  // namespace

bool mask_opencl_supports(const OpCall& call, const OpenclDevice& /*device*/) {
  return call.in.space == MemorySpace::kHost && call.out.space == MemorySpace::kHost;
}

Status mask_opencl(OpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const MaskParams*>(call.params);
  if (call.in.count == 0) return Status::ok();
  const KilnMaskParams p = mask_params_resolve(params, call.in[0].channels);
  KILN_TRY_ASSIGN(cl_kernel decide, ctx.kernel("mask", mask_program::kSource, "mask_decide_kernel"));
  CallBuffers buffers(ctx.pool, ctx.device(), ctx.queue);
  KILN_TRY_ASSIGN(DeviceBatch in, batch_upload(ctx, buffers, call.in));
  KILN_TRY_ASSIGN(DeviceBatch out, batch_alloc(ctx, buffers, call.out));
  const bool smooth = params.smoothing != MaskSmoothing::kNone && p.radius > 0;
  DeviceBatch scratch;
  if (smooth) {
    KILN_TRY_ASSIGN(scratch, batch_alloc(ctx, buffers, call.out));
  }
  // The decision goes where the smoothing passes expect it; every chain ends in `out`.
  const DeviceBatch& decided = smooth && params.smoothing == MaskSmoothing::kMedian ? scratch : out;
  KILN_CL_CHECK(kernel_args_set(decide, in.pixels, in.descs, decided.pixels, decided.descs, p));
  buffers.set_pending(true);
  KILN_TRY(launch_3d(ctx, decide, static_cast<size_t>(in.max_width), static_cast<size_t>(in.max_height),
                     static_cast<size_t>(in.count)));
  if (smooth) {
    KILN_TRY_ASSIGN(cl_kernel pass, ctx.kernel("mask", mask_program::kSource, "mask_smooth_kernel"));
    switch (params.smoothing) {
      case MaskSmoothing::kMedian: KILN_TRY(smooth_pass(ctx, pass, scratch, out, kPassMedian, p.radius)); break;
      case MaskSmoothing::kOpen:
        KILN_TRY(smooth_pass(ctx, pass, out, scratch, kPassErode, p.radius));
        KILN_TRY(smooth_pass(ctx, pass, scratch, out, kPassDilate, p.radius));
        break;
      case MaskSmoothing::kClose:
        KILN_TRY(smooth_pass(ctx, pass, out, scratch, kPassDilate, p.radius));
        KILN_TRY(smooth_pass(ctx, pass, scratch, out, kPassErode, p.radius));
        break;
      case MaskSmoothing::kNone: break;
    }
  }
  KILN_TRY(batch_download(ctx, out, call.out));
  buffers.set_pending(false);
  if (params.largest_component) {
    for (int64_t i = 0; i < call.out.count; ++i) mask_largest_component(call.out[i]);
  }
  return Status::ok();
}

}  // namespace kiln::opencl
