// Quality on the CPU: one pass over each image's rows with a sliding window of three gray rows (each row converted
// to gray once per block), integer Laplacian and Sobel, int64 sums. Work items are (image, block of rows); all
// sums are exact integers, so the result does not depend on the split, on the number of threads or on the ISA
// variant (the row loops are in quality_loops.h: generic here, avx2 in quality_avx2.cpp).
#include <algorithm>
#include <vector>

#include "core/thread_pool.h"
#include "core/cpu_isa.h"
#include "ops/quality.h"

#define KILN_QUALITY_VARIANT generic
#include "ops/cpu/quality_loops.h"
#undef KILN_QUALITY_VARIANT

namespace kiln {

namespace {

// Rows per work item when a pool spreads the work (a single image is split into blocks of this many rows).
constexpr int32_t kBlockRows = 64;

}  // namespace

Status quality_cpu(const OpCall& call, ThreadPool* pool) {
  if (call.in.count > 0 && call.in.space != MemorySpace::kHost) {
    return invalid_argument("quality: the CPU backend needs host images");
  }
  const auto& params = *static_cast<const QualityParams*>(call.params);
  auto* results = static_cast<QualityMetrics*>(call.results);
  const bool bgr = params.bgr;

  // Work items: one per image without a pool; blocks of kBlockRows rows with one.
  std::vector<QualityWorkItem> items;
  for (int64_t i = 0; i < call.in.count; ++i) {
    const int32_t h = call.in[i].height;
    const int32_t step = pool != nullptr ? kBlockRows : h;
    for (int32_t y = 0; y < h; y += step) items.push_back(QualityWorkItem{i, y, std::min(h, y + step)});
  }
  std::vector<KilnQualitySums> partial(items.size());
  const auto quality_items = cpu_isa_active() == CpuIsa::kAvx2 ? avx2::quality_items : generic::quality_items;
  const auto run = [&](int64_t begin, int64_t end) {
    quality_items(call, items.data(), begin, end, bgr, partial.data());
  };
  parallel_for(pool, static_cast<int64_t>(items.size()), run);

  // Partial sums combined in block order (exact integers in any case).
  std::vector<KilnQualitySums> totals(static_cast<size_t>(call.in.count), KilnQualitySums{});
  for (size_t k = 0; k < items.size(); ++k) quality_sums_add(totals[static_cast<size_t>(items[k].image)], partial[k]);
  for (int64_t i = 0; i < call.in.count; ++i) {
    const int64_t pixels = static_cast<int64_t>(call.in[i].width) * call.in[i].height;
    results[i] = quality_metrics_from_sums(totals[static_cast<size_t>(i)], pixels);
  }
  return Status::ok();
}

}  // namespace kiln
