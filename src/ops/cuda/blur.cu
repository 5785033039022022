// The blur family on CUDA: a kernel per stage (one thread per pixel of the image it writes, blockIdx.z = image) over
// two small temporaries in device memory: shrink into the first, each box pass there and back, enlarge into the
// output. Same blur_px.h math as the CPU and OpenCL, mirroring src/ops/opencl/blur.cl. Device batches are read and
// written where they are (the output may be the input): a frame NVDEC left on the device is blurred there (kiln
// segment's blurred background).
#include <vector>

#include "ops/blur.h"
#include "ops/cuda/per_pixel.cuh"

namespace kiln {

namespace {

__global__ void blur_shrink_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* small_base,
                                   const KilnImageDesc* small_descs, int32_t factor) {
  int32_t x, y, image;
  KilnImageDesc s;
  for (bool on = output_pixel(small_descs, &x, &y, &image, &s); on; on = output_pixel_next(s, &y)) {
    const KilnImageDesc d = in_descs[image];
    for (int32_t c = 0; c < s.channels; ++c) {
      small_base[kiln_px_offset(s, x, y, c)] = kiln_blur_shrink_px(in_base, d, factor, x, y, c);
    }
  }
}

__global__ void blur_box_kernel(const uint8_t* src_base, const KilnImageDesc* src_descs, uint8_t* dst_base,
                                const KilnImageDesc* dst_descs, KilnBlurArgs args, int32_t horizontal) {
  int32_t x, y, image;
  KilnImageDesc d;
  for (bool on = output_pixel(dst_descs, &x, &y, &image, &d); on; on = output_pixel_next(d, &y)) {
    const KilnImageDesc s = src_descs[image];
    for (int32_t c = 0; c < d.channels; ++c) {
      dst_base[kiln_px_offset(d, x, y, c)] = kiln_blur_box_px(src_base, s, args, horizontal, x, y, c);
    }
  }
}

__global__ void blur_enlarge_kernel(const uint8_t* small_base, const KilnImageDesc* small_descs, uint8_t* out_base,
                                    const KilnImageDesc* out_descs) {
  int32_t x, y, image;
  KilnImageDesc o;
  for (bool on = output_pixel(out_descs, &x, &y, &image, &o); on; on = output_pixel_next(o, &y)) {
    const KilnImageDesc s = small_descs[image];
    for (int32_t c = 0; c < o.channels; ++c) {
      out_base[kiln_px_offset(o, x, y, c)] = kiln_blur_enlarge_px(small_base, s, o.width, o.height, x, y, c);
    }
  }
}

}  // namespace

bool blur_cuda_supports(const OpCall& call) {
  return call.in.count <= 65535;  // blockIdx.z is the image
}

Status blur_cuda(CudaOpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const auto& params = *static_cast<const BlurParams*>(call.params);
  const KilnBlurArgs args = blur_args_resolve(params);
  CudaCallMemory memory(ctx);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  const std::vector<ImageView> small_views = blur_small_shapes(call.in, args.factor);
  const VarShapeBatchView small_shapes{small_views.data(), call.in.count, MemorySpace::kHost};
  KILN_TRY_ASSIGN(CudaDeviceBatch a, cuda_batch_alloc(ctx, memory, small_shapes));
  KILN_TRY_ASSIGN(CudaDeviceBatch b, cuda_batch_alloc(ctx, memory, small_shapes));
  KILN_TRY_ASSIGN(CudaDeviceBatch out, cuda_batch_alloc(ctx, memory, call.out));
  KILN_TRY(launch_per_output_pixel(blur_shrink_kernel, a, ctx.stream, in.base, in.descs, a.base, a.descs,
                                   args.factor));
  for (int32_t pass = 0; pass < params.passes; ++pass) {
    KILN_TRY(launch_per_output_pixel(blur_box_kernel, b, ctx.stream, a.base, a.descs, b.base, b.descs, args, 1));
    KILN_TRY(launch_per_output_pixel(blur_box_kernel, a, ctx.stream, b.base, b.descs, a.base, a.descs, args, 0));
  }
  KILN_TRY(launch_per_output_pixel(blur_enlarge_kernel, out, ctx.stream, a.base, a.descs, out.base, out.descs));
  return cuda_batch_download(ctx, out, call.out);
}

}  // namespace kiln
