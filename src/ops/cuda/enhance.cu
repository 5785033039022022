// The enhance family on CUDA: one kernel per step (one thread per pixel, blockIdx.z = image; PIL contrast's mean
// as a per-row then per-image reduction), their launchers and the backend entry points. Same enhance_px.h math as
// the CPU and OpenCL, mirroring src/ops/opencl/enhance.cl.
#include <vector>

#include "ops/cuda/per_pixel.cuh"
#include "ops/enhance.h"
#include "ops/enhance_px.h"

namespace kiln {

namespace {

__device__ inline int64_t enhance_at(const KilnImageDesc& d, int32_t x, int32_t y, int32_t c) {
  return d.offset + static_cast<int64_t>(y) * d.row_stride + static_cast<int64_t>(x) * d.channels + c;
}

// Per (row, image): the sum of the row's gray levels after the table.
__global__ void enhance_row_gray_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, const uint8_t* lut,
                                        KilnEnhanceArgs args, int64_t* row_sums, int32_t max_height) {
  const int32_t y = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  const int32_t image = static_cast<int32_t>(blockIdx.z);
  const KilnImageDesc d = in_descs[image];
  if (y >= d.height) return;
  const bool use_lut = (args.flags & KILN_ENHANCE_LUT) != 0;
  int64_t sum = 0;
  for (int32_t x = 0; x < d.width; ++x) {
    int32_t c0 = kiln_enhance_load(in_base, d, x, y, 0);
    int32_t c1 = d.channels >= 3 ? kiln_enhance_load(in_base, d, x, y, 1) : 0;
    int32_t c2 = d.channels >= 3 ? kiln_enhance_load(in_base, d, x, y, 2) : 0;
    if (use_lut) {
      c0 = lut[c0];
      c1 = lut[c1];
      c2 = lut[c2];
    }
    sum += kiln_enhance_gray(args, d.channels, c0, c1, c2);
  }
  row_sums[static_cast<int64_t>(image) * max_height + y] = sum;
}

// Per image: the rounded mean gray level from the row sums.
__global__ void enhance_mean_kernel(const KilnImageDesc* in_descs, const int64_t* row_sums, int32_t max_height,
                                    int32_t* means, int32_t count) {
  const int32_t image = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (image >= count) return;
  const KilnImageDesc d = in_descs[image];
  int64_t total = 0;
  for (int32_t y = 0; y < d.height; ++y) total += row_sums[static_cast<int64_t>(image) * max_height + y];
  means[image] = kiln_enhance_mean_level(total, static_cast<int64_t>(d.width) * d.height);
}

__global__ void enhance_point_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                                     const KilnImageDesc* out_descs, const uint8_t* lut, KilnEnhanceArgs args,
                                     const int32_t* means) {
  int32_t x, y, image;
  KilnImageDesc d;  // outputs have their input's shape
  for (bool on = output_pixel(in_descs, &x, &y, &image, &d); on; on = output_pixel_next(d, &y)) {
    const KilnImageDesc o = out_descs[image];
    const int32_t mean = (args.flags & KILN_ENHANCE_CONTRAST) != 0 ? means[image] : 0;
    for (int32_t c = 0; c < d.channels; ++c) {
      const int32_t value = kiln_enhance_load(in_base, d, x, y, c);
      out_base[enhance_at(o, x, y, c)] = kiln_enhance_point(args, lut, d.channels, c, value, mean);
    }
  }
}

__global__ void enhance_sharpness_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                                         const KilnImageDesc* out_descs, KilnEnhanceArgs args) {
  int32_t x, y, image;
  KilnImageDesc d;  // outputs have their input's shape
  for (bool on = output_pixel(in_descs, &x, &y, &image, &d); on; on = output_pixel_next(d, &y)) {
    const KilnImageDesc o = out_descs[image];
    for (int32_t c = 0; c < d.channels; ++c) {
      out_base[enhance_at(o, x, y, c)] = kiln_enhance_sharpness(args, in_base, d, x, y, c);
    }
  }
}

__global__ void enhance_blur_rows_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* rows_base,
                                         const KilnImageDesc* rows_descs, const float* weights, KilnEnhanceArgs args) {
  int32_t x, y, image;
  KilnImageDesc d;  // outputs have their input's shape
  for (bool on = output_pixel(in_descs, &x, &y, &image, &d); on; on = output_pixel_next(d, &y)) {
    const KilnImageDesc r = rows_descs[image];
    for (int32_t c = 0; c < d.channels; ++c) {
      *reinterpret_cast<float*>(rows_base + r.offset + static_cast<int64_t>(y) * r.row_stride +
                                (static_cast<int64_t>(x) * r.channels + c) * 4) =
          kiln_enhance_blur_row(in_base, d, weights, args.ksize, x, y, c);
    }
  }
}

__global__ void enhance_unsharp_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs,
                                       const uint8_t* rows_base, const KilnImageDesc* rows_descs, uint8_t* out_base,
                                       const KilnImageDesc* out_descs, const float* weights, KilnEnhanceArgs args) {
  int32_t x, y, image;
  KilnImageDesc d;  // outputs have their input's shape
  for (bool on = output_pixel(in_descs, &x, &y, &image, &d); on; on = output_pixel_next(d, &y)) {
    const KilnImageDesc r = rows_descs[image];
    const KilnImageDesc o = out_descs[image];
    for (int32_t c = 0; c < d.channels; ++c) {
      const int32_t blurred = kiln_enhance_blur_col(rows_base, r, weights, args.ksize, x, y, c);
      const int32_t value = kiln_enhance_load(in_base, d, x, y, c);
      out_base[enhance_at(o, x, y, c)] = kiln_enhance_unsharp(value, blurred, args.percent, args.threshold);
    }
  }
}

Status launch_enhance_mean(const CudaDeviceBatch& in, const uint8_t* lut, const KilnEnhanceArgs& args,
                           int64_t* row_sums, int32_t* means, cudaStream_t stream) {
  const dim3 rows_block(64, 1, 1);
  const dim3 rows_grid(ceil_div<uint32_t>(static_cast<uint32_t>(in.max_height), rows_block.x), 1,
                       static_cast<uint32_t>(in.count));
  enhance_row_gray_kernel<<<rows_grid, rows_block, 0, stream>>>(in.base, in.descs, lut, args, row_sums,
                                                                in.max_height);
  KILN_CUDA_CHECK(cudaGetLastError());
  const dim3 mean_block(64, 1, 1);
  const dim3 mean_grid(ceil_div<uint32_t>(static_cast<uint32_t>(in.count), mean_block.x), 1, 1);
  enhance_mean_kernel<<<mean_grid, mean_block, 0, stream>>>(in.descs, row_sums, in.max_height, means,
                                                            static_cast<int32_t>(in.count));
  KILN_CUDA_CHECK(cudaGetLastError());
  return Status::ok();
}

Status launch_enhance_point(const CudaDeviceBatch& in, const CudaDeviceBatch& out, const uint8_t* lut,
                            const KilnEnhanceArgs& args, const int32_t* means, cudaStream_t stream) {
  return launch_per_output_pixel(enhance_point_kernel, in, stream, in.base, in.descs, out.base, out.descs, lut, args,
                                 means);
}

Status launch_enhance_sharpness(const CudaDeviceBatch& in, const CudaDeviceBatch& out, const KilnEnhanceArgs& args,
                                cudaStream_t stream) {
  return launch_per_output_pixel(enhance_sharpness_kernel, in, stream, in.base, in.descs, out.base, out.descs, args);
}

Status launch_enhance_unsharp(const CudaDeviceBatch& in, const CudaDeviceBatch& rows, const CudaDeviceBatch& out,
                              const float* weights, const KilnEnhanceArgs& args, cudaStream_t stream) {
  KILN_TRY(launch_per_output_pixel(enhance_blur_rows_kernel, in, stream, in.base, in.descs, rows.base, rows.descs,
                                   weights, args));
  return launch_per_output_pixel(enhance_unsharp_kernel, in, stream, in.base, in.descs, rows.base, rows.descs,
                                 out.base, out.descs, weights, args);
}

// Host-space views with the shapes of `like` as packed `type` images (device temporaries; pointers not read).
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

bool enhance_cuda_supports(const OpCall& call) {
  return call.in.count <= 65535;  // blockIdx.z is the image
}

Status enhance_cuda(CudaOpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const EnhancePlan plan = enhance_plan(*static_cast<const EnhanceParams*>(call.params));
  const KilnEnhanceArgs args = plan.args;
  const bool contrast = (args.flags & KILN_ENHANCE_CONTRAST) != 0;
  const bool sharp = (args.flags & KILN_ENHANCE_SHARPNESS) != 0;
  const bool unsharp = (args.flags & KILN_ENHANCE_UNSHARP) != 0;
  // Device batches are used in place: when the output overlaps the input, the point step (an identity copy if
  // nothing else) runs first so the neighbourhood steps read a temporary.
  const bool aliased = cuda_in_place(call);
  const bool point = (args.flags & (KILN_ENHANCE_LUT | KILN_ENHANCE_CONTRAST)) != 0 || (!sharp && !unsharp) || aliased;

  CudaCallMemory memory(ctx);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  KILN_TRY_ASSIGN(CudaDeviceBatch out, cuda_batch_alloc(ctx, memory, call.out));
  const std::vector<ImageView> u8_views = shapes_as(call.in, PixelType::kU8);
  const VarShapeBatchView u8_shapes{u8_views.data(), call.in.count, MemorySpace::kHost};
  const CudaDeviceBatch* cur = &in;
  CudaDeviceBatch temp_a, temp_b;

  if (point) {
    KILN_TRY_ASSIGN(void* lut, cuda_buffer_upload(ctx, memory, plan.lut.data(), plan.lut.size(), "enhance table"));
    KILN_TRY_ASSIGN(void* means, memory.acquire(sizeof(int32_t) * static_cast<size_t>(in.count), "enhance means"));
    if (contrast) {
      KILN_TRY_ASSIGN(void* row_sums, memory.acquire(sizeof(int64_t) * static_cast<size_t>(in.max_height) *
                                                         static_cast<size_t>(in.count),
                                                     "enhance row sums"));
      KILN_TRY(launch_enhance_mean(in, static_cast<const uint8_t*>(lut), args, static_cast<int64_t*>(row_sums),
                                   static_cast<int32_t*>(means), ctx.stream));
    }
    const CudaDeviceBatch* dst = &out;
    if (sharp || unsharp) {
      KILN_TRY_ASSIGN(temp_a, cuda_batch_alloc(ctx, memory, u8_shapes));
      dst = &temp_a;
    }
    KILN_TRY(launch_enhance_point(*cur, *dst, static_cast<const uint8_t*>(lut), args,
                                  static_cast<const int32_t*>(means), ctx.stream));
    cur = dst;
  }
  if (sharp) {
    const CudaDeviceBatch* dst = &out;
    if (unsharp) {
      KILN_TRY_ASSIGN(temp_b, cuda_batch_alloc(ctx, memory, u8_shapes));
      dst = &temp_b;
    }
    KILN_TRY(launch_enhance_sharpness(*cur, *dst, args, ctx.stream));
    cur = dst;
  }
  if (unsharp) {
    const std::vector<ImageView> row_views = shapes_as(call.in, PixelType::kF32);
    KILN_TRY_ASSIGN(CudaDeviceBatch rows, cuda_batch_alloc(ctx, memory, VarShapeBatchView{row_views.data(),
                                                                                          call.in.count,
                                                                                          MemorySpace::kHost}));
    KILN_TRY_ASSIGN(void* weights, cuda_buffer_upload(ctx, memory, plan.weights.data(),
                                                      sizeof(float) * plan.weights.size(), "enhance gaussian"));
    KILN_TRY(launch_enhance_unsharp(*cur, rows, out, static_cast<const float*>(weights), args, ctx.stream));
  }
  return cuda_batch_download(ctx, out, call.out);
}

}  // namespace kiln
