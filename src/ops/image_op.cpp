// op_validate: the entry checks shared by every family, then the family's own validation.
#include <string>

#include "ops/resize.h"
#include "ops/color.h"
#include "ops/preprocess.h"
#include "ops/normalize.h"
#include "ops/quality.h"
#include "ops/enhance.h"
#include "ops/warp.h"
#include "ops/mask.h"

namespace kiln {

namespace {

Status batch_check(const VarShapeBatchView& batch, const char* what, const char* op) {
  if (batch.count < 0) return invalid_argument(std::string(op) + ": negative " + what + " count");
  if (batch.count > 0 && batch.images == nullptr) return invalid_argument(std::string(op) + ": " + what + " has no images");
  for (int64_t i = 0; i < batch.count; ++i) {
    const ImageView& v = batch[i];
    const std::string at = std::string(op) + ": " + what + " image " + std::to_string(i);
    if (v.data == nullptr) return invalid_argument(at + " has no data");
    if (v.width <= 0 || v.height <= 0) return invalid_argument(at + " has an empty size");
    if (v.channels < 1) return invalid_argument(at + " has no channels");
    if (v.row_stride < static_cast<int64_t>(v.pixel_size()) * v.width) return invalid_argument(at + ": row stride too small");
    if (v.layout == Layout::kCHW && v.channels > 1 && v.plane_stride < v.row_stride * v.height) {
      return invalid_argument(at + ": plane stride too small");
    }
  }
  return Status::ok();
}

}  // namespace

Status op_validate(const OpCall& call) {
  const char* op = op_kind_name(call.op);
  if (call.op == OpKind::kRender) return invalid_argument("render: not an image op (use the render job)");
  if (call.params == nullptr) return invalid_argument(std::string(op) + ": no parameters");
  KILN_TRY(batch_check(call.in, "input", op));
  KILN_TRY(batch_check(call.out, "output", op));
  switch (call.op) {
    case OpKind::kResize: return resize_validate(call);
    case OpKind::kColor: return color_validate(call);
    case OpKind::kPreprocess: return preprocess_validate(call);
    case OpKind::kNormalize: return normalize_validate(call);
    case OpKind::kQuality: return quality_validate(call);
    case OpKind::kEnhance: return enhance_validate(call);
    case OpKind::kWarp: return warp_validate(call);
    case OpKind::kMask: return mask_validate(call);
    case OpKind::kRender: break;
  }
  return invalid_argument(std::string(op) + ": unknown op");
}

}  // namespace kiln
