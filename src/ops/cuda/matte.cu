// The matte family's CUDA kernel around ops/matte_px.h, mirroring src/ops/opencl/matte.cl: one thread per output pixel
// (a composite's three channels), grid y over rows and z over images (looping past their limits), each block adding its
// person pixels to its image's count when counts are asked for. Device batches are used in place: a probability map a
// model left on the device becomes the frame's matte (or an encoder frame's luma) without a copy through the host.
#include <algorithm>
#include <vector>

#include "ops/cuda/common.cuh"
#include "ops/cuda/cuda_ops.h"
#include "ops/matte.h"

namespace kiln {

namespace {

constexpr int32_t kBlockX = 32;
constexpr int32_t kBlockY = 8;
constexpr int64_t kMaxGridImages = 65535;

// A composite's frames and backgrounds (unused by masks and alphas).
struct CompositeInputs {
  const uint8_t* frame_base = nullptr;
  const KilnImageDesc* frame_descs = nullptr;
  const uint8_t* back_base = nullptr;
  const KilnImageDesc* back_descs = nullptr;
};

__global__ void matte_kernel(const uint8_t* in_base, const KilnImageDesc* in_descs, uint8_t* out_base,
                             const KilnImageDesc* out_descs, int64_t count, KilnMatteParams params,
                             CompositeInputs composite, unsigned long long* person_counts) {
  const int32_t x = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  const int64_t rows_step = static_cast<int64_t>(gridDim.y) * blockDim.y;  // grid y holds at most 65,535 blocks
  for (int64_t i = blockIdx.z; i < count; i += gridDim.z) {  // the same iterations for the whole block
    const KilnImageDesc dout = out_descs[i];
    // The block's first rows, then those a grid's height further: the same iterations for the whole block too.
    for (int64_t block_row = static_cast<int64_t>(blockIdx.y) * blockDim.y; block_row < dout.height;
         block_row += rows_step) {
      const int32_t y = static_cast<int32_t>(block_row + threadIdx.y);
      int person = 0;
      if (x < dout.width && y < dout.height) {
        const uint8_t v = kiln_matte_at(in_base, in_descs[i], dout.width, dout.height, x, y, params);
        if (params.composite) {
          kiln_matte_composite_px(composite.frame_base, composite.frame_descs[i], composite.back_base,
                                  composite.back_descs[i], out_base, dout, x, y, v);
        } else {
          out_base[dout.offset + static_cast<int64_t>(y) * dout.row_stride + x] = v;
        }
        person = kiln_matte_person(v, params);
      }
      if (person_counts != nullptr) {
        const int block_count = __syncthreads_count(person);
        if (threadIdx.x == 0 && threadIdx.y == 0 && block_count > 0) {
          atomicAdd(&person_counts[i], static_cast<unsigned long long>(block_count));
        }
      }
    }
  }
}

}  // namespace

bool matte_cuda_supports(const OpCall& call) { return call.params != nullptr; }

Status matte_cuda(CudaOpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const auto& params = *static_cast<const MatteParams*>(call.params);
  const KilnMatteParams p = matte_params_resolve(params);
  CudaCallMemory memory(ctx);
  KILN_TRY_ASSIGN(CudaDeviceBatch in, cuda_batch_upload(ctx, memory, call.in));
  CudaDeviceBatch frames, backs;  // a composite's, uploaded (host batches) or described (device batches)
  CompositeInputs composite;
  if (p.composite) {
    KILN_TRY_ASSIGN(frames, cuda_batch_upload(ctx, memory, VarShapeBatchView{params.frames, call.in.count,
                                                                             call.in.space}));
    KILN_TRY_ASSIGN(backs, cuda_batch_upload(ctx, memory, VarShapeBatchView{params.backgrounds, call.in.count,
                                                                            call.in.space}));
    composite = {frames.base, frames.descs, backs.base, backs.descs};
  }
  KILN_TRY_ASSIGN(CudaDeviceBatch out, cuda_batch_alloc(ctx, memory, call.out));
  unsigned long long* counts = nullptr;
  const size_t count_bytes = static_cast<size_t>(out.count) * sizeof(unsigned long long);
  if (call.results != nullptr) {
    KILN_TRY_ASSIGN(void* block, memory.acquire(count_bytes, "matte person counts"));
    counts = static_cast<unsigned long long*>(block);
    KILN_CUDA_CHECK(cudaMemsetAsync(counts, 0, count_bytes, ctx.stream));
  }
  if (out.max_width > 0 && out.max_height > 0) {
    const dim3 grid(static_cast<unsigned>(ceil_div(out.max_width, kBlockX)),
                    grid_rows(out.max_height, kBlockY),
                    static_cast<unsigned>(std::min<int64_t>(out.count, kMaxGridImages)));
    matte_kernel<<<grid, dim3(kBlockX, kBlockY, 1), 0, ctx.stream>>>(in.base, in.descs, out.base, out.descs,
                                                                     out.count, p, composite, counts);
    KILN_CUDA_CHECK(cudaGetLastError());
  }
  KILN_TRY(cuda_batch_download(ctx, out, call.out));  // waits for the stream
  if (counts != nullptr) {
    std::vector<unsigned long long> host(static_cast<size_t>(out.count));
    KILN_CUDA_CHECK(cudaMemcpyAsync(host.data(), counts, count_bytes, cudaMemcpyDeviceToHost, ctx.stream));
    KILN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    auto* results = static_cast<int64_t*>(call.results);
    for (size_t i = 0; i < host.size(); ++i) results[i] = static_cast<int64_t>(host[i]);
  }
  return Status::ok();
}

}  // namespace kiln
