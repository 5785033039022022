#include "ops/cpu/render_cpu.h"

#include "core/thread_pool.h"
#include "ops/series_encoding.h"

namespace kiln {

namespace {

using RenderFn = void (*)(const RenderParams&, const VarShapeBatchView&, const VarShapeBatchView&, int64_t, int64_t);

RenderFn render_fn(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kScalar: return scalar::render_images;
    case CpuIsa::kAvx2: return avx2::render_images;
    case CpuIsa::kGeneric: break;
  }
  return generic::render_images;
}

}  // namespace

Status render_cpu(const OpCall& call, ThreadPool* pool) {
  const auto& params = *static_cast<const RenderParams*>(call.params);
  if (chart_style_is_encoding(params.style)) return series_encoding_cpu(call, pool);
  const RenderFn fn = render_fn(cpu_isa_active());
  const int64_t count = call.in.count;
  parallel_for(pool, count, [&](int64_t begin, int64_t end) { fn(params, call.in, call.out, begin, end); });
  return Status::ok();
}

}  // namespace kiln
