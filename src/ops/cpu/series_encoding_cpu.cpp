// Series encodings on the CPU: threads across windows, each running the loops of the active variant
// (series_encoding_loops.h: generic SIMD, or AVX2).
#include "core/cpu_isa.h"
#include "core/thread_pool.h"
#include "ops/series_encoding.h"

namespace kiln {

namespace generic {
void encode_windows(const KilnEncodingParams&, const VarShapeBatchView&, const VarShapeBatchView&, int64_t, int64_t);
}
namespace avx2 {
void encode_windows(const KilnEncodingParams&, const VarShapeBatchView&, const VarShapeBatchView&, int64_t, int64_t);
}

Status series_encoding_cpu(const OpCall& call, ThreadPool* pool) {
  if (call.in.count == 0) return Status::ok();
  const auto& params = *static_cast<const RenderParams*>(call.params);
  const KilnEncodingParams p = encoding_params(params, call.in[0].width);
  const auto encode = cpu_isa_active() == CpuIsa::kAvx2 ? avx2::encode_windows : generic::encode_windows;
  parallel_for(pool, call.in.count, [&](int64_t begin, int64_t end) { encode(p, call.in, call.out, begin, end); });
  return Status::ok();
}

}  // namespace kiln
