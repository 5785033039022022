// Fused preprocess on OpenCL: the resize sampling tables (resize_plan_make) and preprocess_kernel
// (preprocess.cl). The program is the resize program's source followed by the preprocess one (the headers'
// include guards drop the repeated kernel_defs.h / image_px.h), so resize_px.h's sampling is shared verbatim.
#include <string>
#include <vector>

#include "opencl_preprocess_source.h"
#include "ops/opencl/opencl_resample.h"
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
  const auto& params = *static_cast<const PreprocessParams*>(call.params);
  KILN_TRY_ASSIGN(cl_kernel kernel, ctx.kernel("preprocess", preprocess_source(), "preprocess_kernel"));
  const std::vector<RectI> pictures = preprocess_source_rects(params, call.in);
  return resample_opencl(ctx, call, kernel, params.interp, params.fit, pictures.data(), preprocess_consts(params));
}

}  // namespace kiln::opencl
