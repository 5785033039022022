// The color family on the CPU: rows of every image of the batch spread over the pool, each pixel through
// color_px.h (the reference for the GPU backends).
#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "ops/color.h"
#include "ops/color_px.h"

namespace kiln {

namespace {

// Runs row_fn(image, y) for every row of every image of `batch`, rows spread over `pool` (nullptr: this thread).
template <typename RowFn>
void rows_for_each(const VarShapeBatchView& batch, ThreadPool* pool, const RowFn& row_fn) {
  std::vector<int64_t> first_row(static_cast<size_t>(batch.count) + 1, 0);
  for (int64_t i = 0; i < batch.count; ++i) first_row[static_cast<size_t>(i) + 1] = first_row[static_cast<size_t>(i)] + batch[i].height;
  const int64_t rows = first_row.back();
  auto run = [&](int64_t begin, int64_t end) {
    int64_t image = 0;
    while (first_row[static_cast<size_t>(image) + 1] <= begin) ++image;
    for (int64_t r = begin; r < end; ++r) {
      while (first_row[static_cast<size_t>(image) + 1] <= r) ++image;
      row_fn(image, static_cast<int32_t>(r - first_row[static_cast<size_t>(image)]));
    }
  };
  if (pool == nullptr) {
    run(0, rows);
  } else {
    pool->parallel_for(rows, run);
  }
}

}  // namespace

Status color_cpu(const OpCall& call, ThreadPool* pool) {
  const auto& params = *static_cast<const ColorParams*>(call.params);
  const auto conversion = static_cast<int32_t>(params.conversion);
  std::vector<KilnImageDesc> in_descs;
  std::vector<KilnImageDesc> out_descs;
  for (int64_t i = 0; i < call.in.count; ++i) {
    in_descs.push_back(color_host_desc(call.in[i]));
    out_descs.push_back(color_host_desc(call.out[i]));
  }
  rows_for_each(call.out, pool, [&](int64_t image, int32_t y) {
    const KilnImageDesc in = in_descs[static_cast<size_t>(image)];
    const KilnImageDesc out = out_descs[static_cast<size_t>(image)];
    const auto* in_base = static_cast<const uint8_t*>(call.in[image].data);
    auto* out_base = static_cast<uint8_t*>(call.out[image].data);
    if (in.type == KILN_PIXEL_U8 && in.layout == KILN_LAYOUT_HWC && out.layout == KILN_LAYOUT_HWC &&
        (conversion == KILN_COLOR_RGB_TO_GRAY || conversion == KILN_COLOR_BGR_TO_GRAY)) {
      // The common case as a plain loop (same integer math as kiln_color_gray_u8).
      const uint8_t* src = in_base + static_cast<int64_t>(y) * in.row_stride;
      uint8_t* dst = out_base + static_cast<int64_t>(y) * out.row_stride;
      const int32_t cn = in.channels;
      const int32_t r_at = conversion == KILN_COLOR_RGB_TO_GRAY ? 0 : 2;
      for (int32_t x = 0; x < in.width; ++x) {
        dst[x] = kiln_color_gray_u8(src[x * cn + r_at], src[x * cn + 1], src[x * cn + (2 - r_at)]);
      }
      return;
    }
    for (int32_t x = 0; x < out.width; ++x) kiln_color_pixel(in_base, in, out_base, out, conversion, x, y);
  });
  return Status::ok();
}

}  // namespace kiln
