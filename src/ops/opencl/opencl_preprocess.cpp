// Fused preprocess on OpenCL: the resize sampling tables (resize_plan_make) and preprocess_kernel
// (preprocess.cl). The program is the resize program's source followed by the preprocess one (the headers'
// include guards drop the repeated kernel_defs.h / image_px.h), so resize_px.h's sampling is shared verbatim.
#include <string>

#include "opencl_preprocess_source.h"
#include "ops/opencl/opencl_ops.h"
#include "ops/preprocess.h"

namespace kiln::opencl {

const char* resize_opencl_source();  // opencl_resize.cpp

namespace {

const char* preprocess_source() {
  static const std::string source = std::string(resize_opencl_source()) + "\n" + preprocess_program::kSource;
  return source.c_str();
}

}  // namespace

bool preprocess_opencl_supports(const OpCall& call, const OpenclDevice& /*device*/) {
  return call.params != nullptr;  // every interpolation, fit, output type (f32, f16) and layout
}

Status preprocess_opencl(OpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const auto& params = *static_cast<const PreprocessParams*>(call.params);
  ResizeTables tables;
  KILN_TRY(resize_tables_build(params.interp, params.fit, nullptr, call.in, call.out, &tables));
  const KilnPreprocessConsts consts = preprocess_consts(params);

  KILN_TRY_ASSIGN(cl_kernel kernel, ctx.kernel("preprocess", preprocess_source(), "preprocess_kernel"));
  CallBuffers buffers(ctx.pool, ctx.device(), ctx.queue);
  KILN_TRY_ASSIGN(DeviceBatch in, batch_upload(ctx, buffers, call.in));
  KILN_TRY_ASSIGN(DeviceBatch out, batch_alloc(ctx, buffers, call.out));
  KILN_TRY_ASSIGN(cl_mem plans, buffer_upload(ctx, buffers, tables.images.data(),
                                              sizeof(KilnResizeImage) * tables.images.size(), "resize plans"));
  KILN_TRY_ASSIGN(cl_mem index, buffer_upload(ctx, buffers, tables.index.data(),
                                              sizeof(int32_t) * tables.index.size(), "resize indices"));
  KILN_TRY_ASSIGN(cl_mem weight, buffer_upload(ctx, buffers, tables.weight.data(),
                                               sizeof(float) * tables.weight.size(), "resize weights"));
  KILN_CL_CHECK(kernel_args_set(kernel, in.pixels, in.descs, out.pixels, out.descs, plans, index, weight, consts));
  buffers.set_pending(true);
  KILN_TRY(launch_3d(ctx, kernel, static_cast<size_t>(out.max_width), static_cast<size_t>(out.max_height),
                     static_cast<size_t>(call.out.count)));
  KILN_TRY(batch_download(ctx, out, call.out));
  buffers.set_pending(false);
  return Status::ok();
}

}  // namespace kiln::opencl
