// The normalize family on the CPU: every (image, channel, row) of the batch is one unit of work spread over the
// pool; each row is a plain loop of kiln_normalize_value (vectorizable; division, not a reciprocal).
#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "ops/normalize.h"
#include "ops/normalize_px.h"

namespace kiln {

namespace {

void normalize_row(const float* src, float* dst, int32_t width, float mean, float std_dev) {
  for (int32_t x = 0; x < width; ++x) dst[x] = kiln_normalize_value(src[x], mean, std_dev);
}

}  // namespace

Status normalize_cpu(const OpCall& call, ThreadPool* pool) {
  const auto& params = *static_cast<const NormalizeParams*>(call.params);
  const auto channels = static_cast<int64_t>(params.mean.size());
  std::vector<int64_t> first_row(static_cast<size_t>(call.in.count) + 1, 0);
  for (int64_t i = 0; i < call.in.count; ++i) {
    first_row[static_cast<size_t>(i) + 1] = first_row[static_cast<size_t>(i)] + channels * call.in[i].height;
  }
  auto run = [&](int64_t begin, int64_t end) {
    int64_t image = 0;
    for (int64_t r = begin; r < end; ++r) {
      while (first_row[static_cast<size_t>(image) + 1] <= r) ++image;
      const ImageView& in = call.in[image];
      const ImageView& out = call.out[image];
      const int64_t local = r - first_row[static_cast<size_t>(image)];
      const auto c = static_cast<int32_t>(local / in.height);
      const auto y = static_cast<int32_t>(local % in.height);
      normalize_row(in.row<const float>(y, c), out.row<float>(y, c), in.width, params.mean[static_cast<size_t>(c)],
                    params.std[static_cast<size_t>(c)]);
    }
  };
  const int64_t rows = first_row.back();
  parallel_for(pool, rows, run);
  return Status::ok();
}

}  // namespace kiln
