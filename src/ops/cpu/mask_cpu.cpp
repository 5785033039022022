// The mask family on the CPU: the reference implementation. Each stage (decide, median or erode/dilate passes)
// runs over every row of every image of the batch (threaded by rows; each output pixel depends only on the
// previous stage, so results do not depend on the thread count), then the largest-component filter per image.
#include <algorithm>
#include <functional>
#include <vector>

#include "core/cpu_isa.h"
#include "core/thread_pool.h"
#include "ops/image_desc.h"
#include "ops/mask.h"

#define KILN_MASK_VARIANT generic
#include "ops/cpu/mask_loops.h"
#undef KILN_MASK_VARIANT

namespace kiln {

namespace {


// Runs fn(image, y) for every row of every image (heights from `batch`), on the pool when there is one.
void rows_for(const std::vector<ImageView>& batch, ThreadPool* pool, const std::function<void(size_t, int32_t)>& fn) {
  std::vector<int64_t> starts(batch.size() + 1, 0);
  for (size_t i = 0; i < batch.size(); ++i) starts[i + 1] = starts[i] + batch[i].height;
  const auto body = [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const auto image = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), k) - starts.begin() - 1);
      fn(image, static_cast<int32_t>(k - starts[image]));
    }
  };
  parallel_for(pool, starts.back(), body);
}

// One smoothing pass src -> dst (u8 1-channel images of the same shapes).
enum class Pass { kMedian, kErode, kDilate };

void pass_run(Pass pass, int32_t radius, const std::vector<ImageView>& src, const std::vector<ImageView>& dst,
              ThreadPool* pool) {
  rows_for(dst, pool, [&](size_t i, int32_t y) {
    const KilnImageDesc d = image_desc(src[i]);
    const auto* base = static_cast<const uint8_t*>(src[i].data);
    auto* out = dst[i].row<uint8_t>(y);
    for (int32_t x = 0; x < d.width; ++x) {
      out[x] = pass == Pass::kMedian ? kiln_mask_median(base, d, x, y, radius)
                                     : kiln_mask_morph(base, d, x, y, radius, pass == Pass::kDilate ? 1 : 0);
    }
  });
}

}  // namespace

Status mask_cpu(const OpCall& call, ThreadPool* pool) {
  if (call.in.space != MemorySpace::kHost || call.out.space != MemorySpace::kHost) {
    return invalid_argument("mask: the CPU takes host batches only");
  }
  const auto& params = *static_cast<const MaskParams*>(call.params);
  if (call.in.count == 0) return Status::ok();
  const KilnMaskParams p = mask_params_resolve(params, call.in[0].channels);
  const std::vector<ImageView> in(call.in.images, call.in.images + call.in.count);
  const std::vector<ImageView> out(call.out.images, call.out.images + call.out.count);

  // Scratch images for the smoothing passes (packed, one per image).
  const bool smooth = params.smoothing != MaskSmoothing::kNone && p.radius > 0;
  std::vector<std::vector<uint8_t>> scratch_storage;
  std::vector<ImageView> scratch;
  if (smooth) {
    for (const ImageView& v : out) {
      scratch_storage.emplace_back(static_cast<size_t>(v.width) * static_cast<size_t>(v.height));
      scratch.push_back(image_view_packed(scratch_storage.back().data(), v.width, v.height, 1, PixelType::kU8));
    }
  }

  // Stage 1 writes where the smoothing passes expect it: median and open/close end in `out`.
  const bool decide_to_scratch = smooth && params.smoothing == MaskSmoothing::kMedian;
  const std::vector<ImageView>& decided = decide_to_scratch ? scratch : out;
  // Class ids of f32 CHW logits (the common case) take the row-wise loops, but in the scalar reference mode
  // (KILN_CPU_ISA=scalar); the rest the per-pixel reference.
  const CpuIsa isa = cpu_isa_active();
  const auto argmax_row = isa == CpuIsa::kAvx2 ? avx2::mask_argmax_row : generic::mask_argmax_row;
  rows_for(in, pool, [&](size_t i, int32_t y) {
    const KilnImageDesc d = image_desc(in[i]);
    const auto* base = static_cast<const uint8_t*>(in[i].data);
    auto* row = decided[i].row<uint8_t>(y);
    if (p.target < 0 && d.type == KILN_PIXEL_F32 && d.layout == KILN_LAYOUT_CHW && isa != CpuIsa::kScalar) {
      thread_local std::vector<float> best;
      thread_local std::vector<int32_t> id;
      best.resize(static_cast<size_t>(d.width));
      id.resize(static_cast<size_t>(d.width));
      argmax_row(base, d, y, row, best.data(), id.data());
      return;
    }
    for (int32_t x = 0; x < d.width; ++x) row[x] = kiln_mask_decide(base, d, x, y, p);
  });

  if (smooth) {
    switch (params.smoothing) {
      case MaskSmoothing::kMedian: pass_run(Pass::kMedian, p.radius, scratch, out, pool); break;
      case MaskSmoothing::kOpen:
        pass_run(Pass::kErode, p.radius, out, scratch, pool);
        pass_run(Pass::kDilate, p.radius, scratch, out, pool);
        break;
      case MaskSmoothing::kClose:
        pass_run(Pass::kDilate, p.radius, out, scratch, pool);
        pass_run(Pass::kErode, p.radius, scratch, out, pool);
        break;
      case MaskSmoothing::kNone: break;
    }
  }

  if (params.largest_component) {
    const auto body = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) mask_largest_component(out[static_cast<size_t>(i)]);
    };
    parallel_for(pool, static_cast<int64_t>(out.size()), body);
  }
  return Status::ok();
}

}  // namespace kiln
