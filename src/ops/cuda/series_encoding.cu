// Series encodings on CUDA (the render op's gasf/gadf/mtf/rp styles), mirroring src/ops/opencl/series_encoding.cl:
// the windows prepared on the host (ops/series_encoding.h) go up as one float32 image; one thread per pixel, grid y
// over rows and z over windows (looping past their limits).
#include <algorithm>

#include "ops/cuda/common.cuh"
#include "ops/cuda/cuda_ops.h"
#include "ops/series_encoding.h"

namespace kiln {

namespace {

constexpr int32_t kBlockX = 32;
constexpr int32_t kBlockY = 8;
constexpr int64_t kMaxGridImages = 65535;

__global__ void series_encoding_kernel(const uint8_t* rows_base, const KilnImageDesc* rows_desc, uint8_t* out_base,
                                       const KilnImageDesc* out_descs, int64_t count, KilnEncodingParams params) {
  const int32_t x = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  const int64_t first_row = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  const int64_t rows_step = static_cast<int64_t>(gridDim.y) * blockDim.y;
  const KilnImageDesc drows = rows_desc[0];
  for (int64_t w = blockIdx.z; w < count; w += gridDim.z) {
    const KilnImageDesc dout = out_descs[w];
    if (x >= dout.width) continue;
    const auto* row = reinterpret_cast<const float*>(rows_base + drows.offset + w * drows.row_stride);
    const int32_t j = kiln_encoding_index(x, dout.width, params.n);
    for (int64_t r = first_row; r < dout.height; r += rows_step) {
      const int32_t y = static_cast<int32_t>(r);
      const float level = kiln_encoding_level(row, kiln_encoding_index(y, dout.height, params.n), j, params);
      kiln_px_store(out_base, dout, x, y, 0, params.as_float ? __fdiv_rn(level, 255.0f) : level);
    }
  }
}

}  // namespace

Status series_encoding_cuda(CudaOpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const EncodingRows rows = encoding_rows_prepare(call);
  const KilnEncodingParams& p = rows.params;
  CudaCallMemory memory(ctx);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, rows.batch()));
  KILN_TRY_ASSIGN(CudaDeviceBatch out, cuda_batch_alloc(ctx, memory, call.out));
  if (out.max_width > 0 && out.max_height > 0) {
    const dim3 grid(static_cast<unsigned>(ceil_div(out.max_width, kBlockX)), grid_rows(out.max_height, kBlockY),
                    static_cast<unsigned>(std::min<int64_t>(out.count, kMaxGridImages)));
    series_encoding_kernel<<<grid, dim3(kBlockX, kBlockY, 1), 0, ctx.stream>>>(in.base, in.descs, out.base,
                                                                               out.descs, out.count, p);
    KILN_CUDA_CHECK(cudaGetLastError());
  }
  return cuda_batch_download(ctx, out, call.out);
}

}  // namespace kiln
