// The probability family's CUDA kernel around ops/probability_px.h, mirroring src/ops/opencl/probability.cl: one thread
// per pixel, grid y over rows and z over images (looping past their limits). Device batches are used in place: a
// model's output left on the device becomes its person probability there, smoothed into the stream's map on the device.
#include <algorithm>

#include "ops/cuda/common.cuh"
#include "ops/cuda/cuda_ops.h"
#include "ops/probability.h"

namespace kiln {

namespace {

constexpr int32_t kBlockX = 32;
constexpr int32_t kBlockY = 8;
constexpr int64_t kMaxGridImages = 65535;

__global__ void probability_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                                   const KilnImageDesc* out_descs, int64_t count, KilnProbabilityParams params) {
  const int32_t x = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  const int64_t first_row = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  const int64_t rows_step = static_cast<int64_t>(gridDim.y) * blockDim.y;  // grid y holds at most 65,535 blocks
  for (int64_t i = blockIdx.z; i < count; i += gridDim.z) {
    const KilnImageDesc dout = out_descs[i];
    if (x >= dout.width) continue;
    for (int64_t row = first_row; row < dout.height; row += rows_step) {
      const int32_t y = static_cast<int32_t>(row);
      const float prev = params.smooth ? kiln_px_load(out_base, dout, x, y, 0) : 0.0f;
      kiln_px_store(out_base, dout, x, y, 0, kiln_prob_output(in_base, in_descs[i], x, y, params, prev));
    }
  }
}

}  // namespace

bool probability_cuda_supports(const OpCall& call) { return call.params != nullptr; }

Status probability_cuda(CudaOpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const KilnProbabilityParams p = probability_params_resolve(*static_cast<const ProbabilityParams*>(call.params));
  CudaCallMemory memory(ctx);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  // Smoothing reads the previous map from the output: a host output goes up first.
  KILN_TRY_ASSIGN(CudaDeviceBatch out,
                  p.smooth ? cuda_batch_upload(ctx, memory, call.out) : cuda_batch_alloc(ctx, memory, call.out));
  if (out.max_width > 0 && out.max_height > 0) {
    const dim3 grid(static_cast<unsigned>(ceil_div(out.max_width, kBlockX)),
                    grid_rows(out.max_height, kBlockY),
                    static_cast<unsigned>(std::min<int64_t>(out.count, kMaxGridImages)));
    probability_kernel<<<grid, dim3(kBlockX, kBlockY, 1), 0, ctx.stream>>>(in.base, in.descs, out.base, out.descs,
                                                                           out.count, p);
    KILN_CUDA_CHECK(cudaGetLastError());
  }
  return cuda_batch_download(ctx, out, call.out);
}

}  // namespace kiln
