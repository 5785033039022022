// Quality on CUDA: one block of KILN_QUALITY_GROUP threads per (image, block of KILN_QUALITY_BLOCK_ROWS rows)
// writes that block's integer sums (quality_px.h); the host adds the blocks of each image. The sums are exact
// integers, so the result equals the CPU's bit for bit whatever the reduction order.
#include <algorithm>
#include <vector>

#include "core/fault.h"
#include "ops/cuda/common.cuh"
#include "ops/cuda/cuda_ops.h"
#include "ops/quality.h"
#include "ops/quality_px.h"

namespace kiln {

namespace {

__global__ void quality_sums_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, int32_t bgr, int32_t blocks,
                                    long long* partial) {
  const int32_t image = static_cast<int32_t>(blockIdx.y);
  const int32_t block = static_cast<int32_t>(blockIdx.x);
  const int32_t lid = static_cast<int32_t>(threadIdx.x);
  const KilnImageDesc d = in_descs[image];
  const int32_t y0 = block * KILN_QUALITY_BLOCK_ROWS;
  const int32_t y1 = kiln_mini(d.height, y0 + KILN_QUALITY_BLOCK_ROWS);
  const int32_t pixels = y1 > y0 ? (y1 - y0) * d.width : 0;

  int64_t gray_sum = 0, gray_sq = 0, lap_sum = 0, lap_sq = 0, mag_fixed = 0;
  for (int32_t p = lid; p < pixels; p += KILN_QUALITY_GROUP) {
    const int32_t y = y0 + p / d.width;
    const int32_t x = p - (p / d.width) * d.width;
    const KilnQualityWindow w = kiln_quality_window_at(in_base, d, x, y, bgr);
    kiln_quality_accumulate(w, &gray_sum, &gray_sq, &lap_sum, &lap_sq, &mag_fixed);
  }

  __shared__ long long scratch[KILN_QUALITY_SUMS][KILN_QUALITY_GROUP];
  scratch[0][lid] = gray_sum;
  scratch[1][lid] = gray_sq;
  scratch[2][lid] = lap_sum;
  scratch[3][lid] = lap_sq;
  scratch[4][lid] = mag_fixed;
  __syncthreads();
  for (int32_t half = KILN_QUALITY_GROUP / 2; half > 0; half /= 2) {
    if (lid < half) {
      for (int32_t k = 0; k < KILN_QUALITY_SUMS; ++k) scratch[k][lid] += scratch[k][lid + half];
    }
    __syncthreads();
  }
  if (lid < KILN_QUALITY_SUMS) {
    partial[(static_cast<int64_t>(image) * blocks + block) * KILN_QUALITY_SUMS + lid] = scratch[lid][0];
  }
}

}  // namespace

Status launch_quality(const uint8_t* in_base, const KilnImageDesc* in_descs, int64_t count, int32_t blocks, bool bgr,
                      long long* partial, cudaStream_t stream) {
  if (fault_should_fail(FaultSite::kLaunch)) {
    return Status(Errc::kDeviceError, "cuda: injected kernel launch failure (KILN_FAULT)");
  }
  if (count == 0 || blocks == 0) return Status::ok();
  if (count > 65535) return invalid_argument("cuda: quality batch larger than 65535 images");
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(count), 1);
  quality_sums_kernel<<<grid, KILN_QUALITY_GROUP, 0, stream>>>(in_base, in_descs, bgr ? 1 : 0, blocks, partial);
  KILN_CUDA_CHECK(cudaGetLastError());
  return Status::ok();
}

bool quality_cuda_supports(const OpCall& call) { return call.in.count <= 65535; }

Status quality_cuda(CudaOpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const QualityParams*>(call.params);
  auto* results = static_cast<QualityMetrics*>(call.results);
  if (call.in.count == 0) return Status::ok();
  NvtxRange range("quality");
  CudaCallMemory memory(ctx);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  const int32_t blocks = (in.max_height + KILN_QUALITY_BLOCK_ROWS - 1) / KILN_QUALITY_BLOCK_ROWS;
  const size_t partial_count = static_cast<size_t>(in.count) * static_cast<size_t>(blocks) * KILN_QUALITY_SUMS;
  KILN_TRY_ASSIGN(void* partial, memory.acquire(partial_count * sizeof(long long), "quality sums"));
  KILN_TRY(launch_quality(in.base, in.descs, in.count, blocks, params.bgr, static_cast<long long*>(partial),
                          ctx.stream));
  std::vector<long long> host(partial_count);
  KILN_CUDA_CHECK(cudaMemcpyAsync(host.data(), partial, partial_count * sizeof(long long), cudaMemcpyDeviceToHost,
                                  ctx.stream));
  KILN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  for (int64_t i = 0; i < in.count; ++i) {
    KilnQualitySums total{};
    for (int32_t b = 0; b < blocks; ++b) {
      const long long* s = host.data() + (static_cast<size_t>(i) * static_cast<size_t>(blocks) + static_cast<size_t>(b)) *
                                             KILN_QUALITY_SUMS;
      quality_sums_add(total, KilnQualitySums{s[0], s[1], s[2], s[3], s[4]});
    }
    const int64_t pixels = static_cast<int64_t>(call.in[i].width) * call.in[i].height;
    results[i] = quality_metrics_from_sums(total, pixels);
  }
  return Status::ok();
}

}  // namespace kiln
