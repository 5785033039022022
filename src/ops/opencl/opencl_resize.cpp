// Resize on OpenCL: the host builds each image's sampling tables (resize_plan_make), uploads them with the batch
// and runs resize_kernel (resize.cl) over every output pixel.
#include "opencl_resize_source.h"
#include "ops/opencl/opencl_resample.h"

namespace kiln::opencl {

// The resize program's source; the preprocess program is built from it followed by preprocess.cl.
const char* resize_opencl_source() { return resize_program::kSource; }

bool resize_opencl_supports(const OpCall& call, const OpenclDevice& /*device*/) {
  return call.params != nullptr;  // every interpolation, fit, type (u8, f32) and layout
}

Status resize_opencl(OpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const ResizeParams*>(call.params);
  KILN_TRY_ASSIGN(cl_kernel kernel, ctx.kernel("resize", resize_opencl_source(), "resize_kernel"));
  return resample_opencl(ctx, call, kernel, params.interp, params.fit, params.rois, resize_pad(params));
}

}  // namespace kiln::opencl
