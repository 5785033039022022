#include "ops/op_family.h"

#include <iterator>
#include <string>

#include "ops/blur.h"
#include "ops/color.h"
#include "ops/enhance.h"
#include "ops/mask.h"
#include "ops/matte.h"
#include "ops/normalize.h"
#include "ops/preprocess.h"
#include "ops/probability.h"
#include "ops/quality.h"
#include "ops/render.h"
#include "ops/resize.h"
#include "ops/warp.h"

namespace kiln {

namespace {

std::shared_ptr<const void> resize_params_slice(const void* params, int64_t first) {
  auto sliced = std::make_shared<ResizeParams>(*static_cast<const ResizeParams*>(params));
  if (sliced->rois != nullptr) sliced->rois += first;
  return sliced;
}

std::shared_ptr<const void> warp_params_slice(const void* params, int64_t first) {
  auto sliced = std::make_shared<WarpParams>(*static_cast<const WarpParams*>(params));
  if (sliced->matrices != nullptr) sliced->matrices += first;
  return sliced;
}

constexpr const char* kImageProcessing = "IMAGE_PROCESSING_GPU";

// Indexed by OpKind.
constexpr OpFamily kFamilies[] = {
    {OpKind::kRender, "render", "RENDER_GPU", render_validate, 0, nullptr},
    {OpKind::kResize, "resize", kImageProcessing, resize_validate, 0, resize_params_slice},
    {OpKind::kColor, "color", kImageProcessing, color_validate, 0, nullptr},
    {OpKind::kPreprocess, "preprocess", kImageProcessing, preprocess_validate, 0, nullptr},
    {OpKind::kNormalize, "normalize", kImageProcessing, normalize_validate, 0, nullptr},
    {OpKind::kQuality, "quality", "QUALITY_CHECKS_GPU", quality_validate, sizeof(QualityMetrics), nullptr},
    {OpKind::kEnhance, "enhance", "IMAGE_ENHANCEMENT_GPU", enhance_validate, 0, nullptr},
    {OpKind::kWarp, "warp", kImageProcessing, warp_validate, 0, warp_params_slice},
    {OpKind::kMask, "mask", kImageProcessing, mask_validate, 0, nullptr},
    {OpKind::kMatte, "matte", kImageProcessing, matte_validate, sizeof(int64_t), matte_params_slice},
    {OpKind::kProbability, "probability", kImageProcessing, probability_validate, 0, nullptr},
    {OpKind::kBlur, "blur", kImageProcessing, blur_validate, 0, nullptr},
};
static_assert(std::size(kFamilies) == kOpKindCount);

constexpr bool families_in_order() {
  for (int i = 0; i < kOpKindCount; ++i) {
    if (static_cast<int>(kFamilies[i].op) != i) return false;
  }
  return true;
}
static_assert(families_in_order(), "kFamilies is indexed by OpKind");

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

const OpFamily& op_family(OpKind op) { return kFamilies[static_cast<int>(op)]; }

const char* op_kind_name(OpKind op) {
  return static_cast<int>(op) < kOpKindCount ? op_family(op).name : "?";
}

const char* op_gpu_switch_name(OpKind op) { return op_family(op).gpu_switch; }

Status op_validate(const OpCall& call) {
  if (static_cast<int>(call.op) >= kOpKindCount) return invalid_argument("unknown op");
  const OpFamily& family = op_family(call.op);
  if (call.params == nullptr) return invalid_argument(std::string(family.name) + ": no parameters");
  KILN_TRY(batch_check(call.in, "input", family.name));
  KILN_TRY(batch_check(call.out, "output", family.name));
  return family.validate(call);
}

OpCallSlice op_call_slice(const OpCall& call, int64_t first, int64_t count) {
  const OpFamily& family = op_family(call.op);
  OpCallSlice slice;
  slice.call = call;
  auto take = [&](VarShapeBatchView& batch) {
    if (batch.count == 0) return;
    batch.images += first;
    batch.count = count;
  };
  take(slice.call.in);
  take(slice.call.out);
  if (call.results != nullptr) slice.call.results = static_cast<uint8_t*>(call.results) + first * family.result_size;
  if (family.params_slice != nullptr && first != 0) {
    slice.params = family.params_slice(call.params, first);
    slice.call.params = slice.params.get();
  }
  return slice;
}

}  // namespace kiln
