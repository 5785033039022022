// The preprocess family on CUDA: preprocess_kernel (one thread per output pixel, blockIdx.z = image) and the
// backend entry points (the sampling tables and the launch are resample.cuh's, shared with resize). The math is
// kiln_preprocess_pixel (preprocess_px.h), the same as the CPU and OpenCL.
#include "ops/cuda/resample.cuh"
#include "ops/preprocess.h"
#include "ops/preprocess_px.h"

namespace kiln {

namespace {

__global__ void preprocess_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                                  const KilnImageDesc* out_descs, const KilnResizeImage* plans, const int32_t* index,
                                  const float* weight, KilnPreprocessConsts consts) {
  int32_t x, y, image;
  KilnImageDesc out;
  for (bool on = output_pixel(out_descs, &x, &y, &image, &out); on; on = output_pixel_next(out, &y)) {
    kiln_preprocess_pixel(in_base, in_descs[image], out_base, out, plans[image], index, weight, consts, x, y);
  }
}

}  // namespace

bool preprocess_cuda_supports(const OpCall& call) {
  return call.params != nullptr && call.in.count <= 65535;  // u8 in, f32/f16 out: never in place
}

Status preprocess_cuda(CudaOpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const PreprocessParams*>(call.params);
  const std::vector<RectI> pictures = preprocess_source_rects(params, call.in);
  return resample_cuda<KilnPreprocessConsts>(ctx, call, preprocess_kernel, params.interp, params.fit, pictures.data(),
                                             preprocess_consts(params));
}

}  // namespace kiln
