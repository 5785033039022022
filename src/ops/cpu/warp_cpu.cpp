// The warp family on the CPU: rows of every output image spread over the pool, each pixel through warp_px.h
// (the reference for the GPU backends).
#include <array>
#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "ops/warp.h"
#include "ops/warp_px.h"

namespace kiln {

Status warp_cpu(const OpCall& call, ThreadPool* pool) {
  const auto& params = *static_cast<const WarpParams*>(call.params);
  const std::vector<std::array<float, 6>> matrices = warp_source_matrices(params, call.in.count);
  const auto mode = static_cast<int32_t>(params.border);
  const float* b = params.border_value;
  std::vector<int64_t> first_row(static_cast<size_t>(call.out.count) + 1, 0);
  for (int64_t i = 0; i < call.out.count; ++i) {
    first_row[static_cast<size_t>(i) + 1] = first_row[static_cast<size_t>(i)] + call.out[i].height;
  }
  auto run = [&](int64_t begin, int64_t end) {
    int64_t image = 0;
    for (int64_t r = begin; r < end; ++r) {
      while (first_row[static_cast<size_t>(image) + 1] <= r) ++image;
      const auto y = static_cast<int32_t>(r - first_row[static_cast<size_t>(image)]);
      const KilnImageDesc in = warp_host_desc(call.in[image]);
      const KilnImageDesc out = warp_host_desc(call.out[image]);
      const auto* in_base = static_cast<const uint8_t*>(call.in[image].data);
      auto* out_base = static_cast<uint8_t*>(call.out[image].data);
      const float* m = matrices[static_cast<size_t>(image)].data();
      for (int32_t x = 0; x < out.width; ++x) {
        kiln_warp_pixel(in_base, in, out_base, out, m, mode, b[0], b[1], b[2], b[3], x, y);
      }
    }
  };
  const int64_t rows = first_row.back();
  if (pool == nullptr) {
    run(0, rows);
  } else {
    pool->parallel_for(rows, run);
  }
  return Status::ok();
}

}  // namespace kiln
