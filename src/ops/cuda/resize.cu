// The resize family on CUDA: resize_kernel (one thread per output pixel, blockIdx.z = image) and the backend
// entry points (the tables and the launch are resample.cuh's). The math is kiln_resize_pixel (resize_px.h), the
// same as the CPU and OpenCL.
#include "ops/cuda/resample.cuh"
#include "ops/resize.h"
#include "ops/resize_px.h"

namespace kiln {

namespace {

__global__ void resize_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                              const KilnImageDesc* out_descs, const KilnResizeImage* plans, const int32_t* index,
                              const float* weight, KilnResizePad pad) {
  int32_t x, y, image;
  KilnImageDesc out;
  for (bool on = output_pixel(out_descs, &x, &y, &image, &out); on; on = output_pixel_next(out, &y)) {
    kiln_resize_pixel(in_base, in_descs[image], out_base, out, plans[image], index, weight, pad, x, y);
  }
}

}  // namespace

// Not in place: outputs are written while other threads still read the inputs.
bool resize_cuda_supports(const OpCall& call) { return call.in.count <= 65535 && !cuda_in_place(call); }

Status resize_cuda(CudaOpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const ResizeParams*>(call.params);
  return resample_cuda<KilnResizePad>(ctx, call, resize_kernel, params.interp, params.fit, params.rois,
                                      resize_pad(params));
}

}  // namespace kiln
