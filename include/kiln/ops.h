// Op families and op calls: what every backend runs (kiln/device.h) and op_run places (kiln/exec.h). Each family
// has its parameters in include/kiln/ops/<family>.h, validation in src/ops/<family>.cpp, per-pixel math in
// src/ops/<family>_px.h, one entry in the family table (src/ops/op_family.cpp) and one in each backend's op table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kiln/image.h"
#include "kiln/status.h"

namespace kiln {

enum class OpKind : uint8_t {
  kRender = 0,  // series windows -> line or OHLC chart images
  kResize,      // resize (nearest/bilinear/area/bicubic), crop, letterbox
  kColor,       // channel swap, to gray, HWC <-> CHW
  kPreprocess,  // fused resize + swap + normalize + layout + dtype
  kNormalize,   // channel-wise normalization of f32 NCHW
  kQuality,     // blur / brightness / contrast / sharpness in one pass
  kEnhance,     // brightness/contrast/gamma, unsharp mask, PIL-style contrast and sharpness
  kWarp,        // affine warp, bilinear, with border modes
  kMask,        // logits -> u8 masks
  kMatte,       // probability maps -> frame-size u8 masks or alphas (bilinear over a region)
  kProbability, // model outputs -> f32 person probability maps, optionally smoothed in time
  kBlur,        // wide blurs: shrink, box passes, enlarge (video backgrounds)
};
inline constexpr int kOpKindCount = 12;

// One call of an op: the family's parameters (the struct its header names), the input batch, and either an output
// batch or per-image results (quality: one QualityMetrics per input image). Image i of `in` gives image i of `out`
// (or results[i]); render's inputs are windows of a series (kiln/ops/render.h).
struct OpCall {
  OpKind op = OpKind::kResize;
  const void* params = nullptr;
  VarShapeBatchView in;
  VarShapeBatchView out;
  void* results = nullptr;
};

const char* op_kind_name(OpKind op);  // "render", "resize", ...
// The predecessor's per-operation switch that governs `op`: RENDER_GPU, IMAGE_PROCESSING_GPU (resize, color,
// preprocess, normalize, warp, mask, matte, probability, blur), IMAGE_ENHANCEMENT_GPU (enhance), QUALITY_CHECKS_GPU
// (quality).
const char* op_gpu_switch_name(OpKind op);

// InvalidArgument when the call's shapes, types or parameters are wrong for its op; checked before any backend
// sees it.
Status op_validate(const OpCall& call);

// Images [first, first + count) of a call: the same op on a slice of its batches, results and per-image parameters
// (resize ROIs, warp matrices; those parameters are copied into `params`, which the sliced call points at).
struct OpCallSlice {
  OpCall call;
  std::shared_ptr<const void> params;
};
OpCallSlice op_call_slice(const OpCall& call, int64_t first, int64_t count);

}  // namespace kiln
