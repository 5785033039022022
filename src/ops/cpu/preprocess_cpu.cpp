// Fused preprocess on the CPU: per output row, the resize row (resize_row_cpu: the same tables and float
// expression as kiln_resize_sample) and then swap + normalize + store straight into the f32/f16 HWC/CHW output,
// with no intermediate image. Rows are spread over the pool.
#include <functional>
#include <vector>

#include "core/thread_pool.h"
#include "ops/preprocess.h"

namespace kiln {

namespace {

template <typename Out>
Out out_value(float v) {
  if constexpr (sizeof(Out) == 2) {
    return static_cast<uint16_t>(kiln_float_to_half(v));
  } else {
    return v;
  }
}

template <typename Out>
void preprocess_image(const ImageView& in, const ImageView& out, const ResizePlan& plan, const KilnPreprocessConsts& k,
                      ThreadPool* pool) {
  const int32_t cn = in.channels;
  const bool planar = out.layout == Layout::kCHW;
  const size_t span = static_cast<size_t>(plan.x.hi - plan.x.lo + 1) * static_cast<size_t>(cn);
  int32_t source[4];
  Out pad[4];
  for (int32_t c = 0; c < cn; ++c) {
    source[c] = kiln_preprocess_source_channel(k.swap_rb, c);
    pad[c] = out_value<Out>(kiln_preprocess_normalize(k.pad[source[c]], k.scale, k.mean[c], k.std[c]));
  }
  auto rows = [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(span);
    std::vector<float> values(static_cast<size_t>(plan.dst.width) * static_cast<size_t>(cn));
    for (int64_t yy = begin; yy < end; ++yy) {
      const auto y = static_cast<int32_t>(yy);
      const int32_t ty = y - plan.dst.y;
      const bool inside_row = ty >= 0 && ty < plan.dst.height;
      if (inside_row) resize_row_cpu(in, cn, plan, ty, scratch.data(), values.data());
      const int32_t x0 = inside_row ? plan.dst.x : out.width;
      const int32_t x1 = inside_row ? plan.dst.x + plan.dst.width : out.width;
      for (int32_t c = 0; c < cn; ++c) {
        Out* dst = out.row<Out>(y, planar ? c : 0);
        const int32_t step = planar ? 1 : cn;
        const int32_t at = planar ? 0 : c;
        const float scale = k.scale;
        const float mean = k.mean[c];
        const float std_dev = k.std[c];
        const float* v = values.data() + source[c];
        for (int32_t x = 0; x < x0; ++x) dst[x * step + at] = pad[c];
        const int32_t n = x1 - x0;
        Out* d = dst + x0 * step + at;
        if (planar) {
          for (int32_t x = 0; x < n; ++x) {
            d[x] = out_value<Out>(kiln_preprocess_normalize(v[x * cn], scale, mean, std_dev));
          }
        } else {
          for (int32_t x = 0; x < n; ++x) {
            d[x * cn] = out_value<Out>(kiln_preprocess_normalize(v[x * cn], scale, mean, std_dev));
          }
        }
        for (int32_t x = x1; x < out.width; ++x) dst[x * step + at] = pad[c];
      }
    }
  };
  if (pool == nullptr || out.height < 2) {
    rows(0, out.height);
  } else {
    pool->parallel_for(out.height, rows);
  }
}

}  // namespace

Status preprocess_cpu(const OpCall& call, ThreadPool* pool) {
  KILN_TRY(preprocess_validate(call));
  const auto& params = *static_cast<const PreprocessParams*>(call.params);
  const KilnPreprocessConsts k = preprocess_consts(params);
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out = call.out[i];
    const ResizePlan plan =
        resize_plan_make(params.interp, params.fit, RectI{0, 0, in.width, in.height}, out.width, out.height);
    if (out.type == PixelType::kF16) {
      preprocess_image<uint16_t>(in, out, plan, k, pool);
    } else {
      preprocess_image<float>(in, out, plan, k, pool);
    }
  }
  return Status::ok();
}

}  // namespace kiln
