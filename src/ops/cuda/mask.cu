// The mask family's CUDA kernels around ops/mask_px.h, mirroring src/ops/opencl/mask.cl: one thread per output pixel,
// grid y over rows and z over images (looping past their 65,535 blocks). The largest-component filter runs on the host
// after the download (mask_largest_component), so calls asking for it need host batches.
#include <algorithm>
#include <vector>

#include "ops/cuda/common.cuh"
#include "ops/cuda/cuda_ops.h"
#include "ops/mask.h"

namespace kiln {

namespace {

constexpr int32_t kBlockX = 32;
constexpr int32_t kBlockY = 8;
constexpr int64_t kMaxGridImages = 65535;
constexpr int32_t kPassMedian = 0;
constexpr int32_t kPassErode = 1;
constexpr int32_t kPassDilate = 2;

__global__ void mask_decide_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                                   const KilnImageDesc* out_descs, int64_t count, KilnMaskParams params) {
  const int32_t x = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  const int64_t first_row = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  const int64_t rows_step = static_cast<int64_t>(gridDim.y) * blockDim.y;  // grid y holds at most 65,535 blocks
  for (int64_t i = blockIdx.z; i < count; i += gridDim.z) {
    const KilnImageDesc din = in_descs[i];
    if (x >= din.width) continue;
    const KilnImageDesc dout = out_descs[i];
    for (int64_t y = first_row; y < din.height; y += rows_step) {
      const uint8_t v = kiln_mask_decide(in_base, din, x, static_cast<int32_t>(y), params);
      out_base[dout.offset + y * dout.row_stride + x] = v;
    }
  }
}

__global__ void mask_smooth_kernel(const uint8_t* src_base, const KilnImageDesc* src_descs, uint8_t* dst_base,
                                   const KilnImageDesc* dst_descs, int64_t count, int32_t pass, int32_t radius) {
  const int32_t x = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  const int64_t first_row = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  const int64_t rows_step = static_cast<int64_t>(gridDim.y) * blockDim.y;  // grid y holds at most 65,535 blocks
  for (int64_t i = blockIdx.z; i < count; i += gridDim.z) {
    const KilnImageDesc ds = src_descs[i];
    if (x >= ds.width) continue;
    const KilnImageDesc dd = dst_descs[i];
    for (int64_t row = first_row; row < ds.height; row += rows_step) {
      const int32_t y = static_cast<int32_t>(row);
      const uint8_t v = pass == kPassMedian ? kiln_mask_median(src_base, ds, x, y, radius)
                                            : kiln_mask_morph(src_base, ds, x, y, radius, pass == kPassDilate ? 1 : 0);
      dst_base[dd.offset + row * dd.row_stride + x] = v;
    }
  }
}

dim3 grid_of(int32_t max_width, int32_t max_height, int64_t count) {
  return dim3(static_cast<unsigned>(ceil_div(max_width, kBlockX)), grid_rows(max_height, kBlockY),
              static_cast<unsigned>(std::min<int64_t>(count, kMaxGridImages)));
}

// A host-space twin of `out` (same shapes, no pixels) so cuda_batch_alloc gives fresh packed device scratch even
// when `out` is a device batch.
std::vector<ImageView> shapes_of(const VarShapeBatchView& out) {
  std::vector<ImageView> views(out.images, out.images + out.count);
  return views;
}

Status launch_mask_decide(const CudaDeviceBatch& in, const CudaDeviceBatch& out, const KilnMaskParams& params,
                          cudaStream_t stream) {
  if (in.count == 0 || in.max_width == 0 || in.max_height == 0) return Status::ok();
  mask_decide_kernel<<<grid_of(in.max_width, in.max_height, in.count), dim3(kBlockX, kBlockY, 1), 0, stream>>>(
      in.base, in.descs, out.base, out.descs, in.count, params);
  KILN_CUDA_CHECK(cudaGetLastError());
  return Status::ok();
}

Status launch_mask_smooth(const CudaDeviceBatch& src, const CudaDeviceBatch& dst, int32_t pass, int32_t radius,
                          cudaStream_t stream) {
  if (dst.count == 0 || dst.max_width == 0 || dst.max_height == 0) return Status::ok();
  mask_smooth_kernel<<<grid_of(dst.max_width, dst.max_height, dst.count), dim3(kBlockX, kBlockY, 1), 0, stream>>>(
      src.base, src.descs, dst.base, dst.descs, dst.count, pass, radius);
  KILN_CUDA_CHECK(cudaGetLastError());
  return Status::ok();
}

}  // namespace

bool mask_cuda_supports(const OpCall& call) {
  const auto* params = static_cast<const MaskParams*>(call.params);
  if (params == nullptr) return false;
  // The largest-component filter is host code: it needs the result on the host.
  if (params->largest_component && call.out.space != MemorySpace::kHost) return false;
  return true;
}

Status mask_cuda(CudaOpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const MaskParams*>(call.params);
  if (call.in.count == 0) return Status::ok();
  const KilnMaskParams p = mask_params_resolve(params, call.in[0].channels);
  CudaCallMemory memory(ctx);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  KILN_TRY_ASSIGN(CudaDeviceBatch out, cuda_batch_alloc(ctx, memory, call.out));
  const bool smooth = params.smoothing != MaskSmoothing::kNone && p.radius > 0;
  CudaDeviceBatch scratch;
  const std::vector<ImageView> scratch_shapes = shapes_of(call.out);
  if (smooth) {
    const VarShapeBatchView host_twin{scratch_shapes.data(), call.out.count, MemorySpace::kHost};
    KILN_TRY_ASSIGN(scratch, cuda_batch_alloc(ctx, memory, host_twin));
  }
  // The decision goes where the smoothing passes expect it; every chain ends in `out`.
  const CudaDeviceBatch& decided = smooth && params.smoothing == MaskSmoothing::kMedian ? scratch : out;
  KILN_TRY(launch_mask_decide(in, decided, p, ctx.stream));
  if (smooth) {
    switch (params.smoothing) {
      case MaskSmoothing::kMedian: KILN_TRY(launch_mask_smooth(scratch, out, kPassMedian, p.radius, ctx.stream)); break;
      case MaskSmoothing::kOpen:
        KILN_TRY(launch_mask_smooth(out, scratch, kPassErode, p.radius, ctx.stream));
        KILN_TRY(launch_mask_smooth(scratch, out, kPassDilate, p.radius, ctx.stream));
        break;
      case MaskSmoothing::kClose:
        KILN_TRY(launch_mask_smooth(out, scratch, kPassDilate, p.radius, ctx.stream));
        KILN_TRY(launch_mask_smooth(scratch, out, kPassErode, p.radius, ctx.stream));
        break;
      case MaskSmoothing::kNone: break;
    }
  }
  KILN_TRY(cuda_batch_download(ctx, out, call.out));
  if (params.largest_component) {
    for (int64_t i = 0; i < call.out.count; ++i) mask_largest_component(call.out[i]);
  }
  return Status::ok();
}

}  // namespace kiln
