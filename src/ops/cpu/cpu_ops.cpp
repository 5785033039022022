// The CPU backend's image-op dispatch: one entry per family.
#include "ops/cpu/cpu_ops.h"

#include "ops/resize.h"
#include "ops/color.h"
#include "ops/preprocess.h"
#include "ops/normalize.h"
#include "ops/quality.h"
#include "ops/enhance.h"
#include "ops/warp.h"
#include "ops/mask.h"

namespace kiln {

Status cpu_op_run(const OpCall& call, ThreadPool* pool) {
  switch (call.op) {
    case OpKind::kResize: return resize_cpu(call, pool);
    case OpKind::kColor: return color_cpu(call, pool);
    case OpKind::kPreprocess: return preprocess_cpu(call, pool);
    case OpKind::kNormalize: return normalize_cpu(call, pool);
    case OpKind::kQuality: return quality_cpu(call, pool);
    case OpKind::kEnhance: return enhance_cpu(call, pool);
    case OpKind::kWarp: return warp_cpu(call, pool);
    case OpKind::kMask: return mask_cpu(call, pool);
    case OpKind::kRender: break;
  }
  return Status(Errc::kNotImplemented, std::string("cpu: no ") + op_kind_name(call.op) + " op");
}

}  // namespace kiln
