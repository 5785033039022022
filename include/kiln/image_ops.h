// The ops library: one call per family, batched on every backend, placed and run by op_run (kiln/exec.h).
// Parameters are in include/kiln/ops/<family>.h; docs/ops/ describes each family.
#pragma once

#include "kiln/exec.h"
#include "kiln/ops/blur.h"
#include "kiln/ops/color.h"
#include "kiln/ops/enhance.h"
#include "kiln/ops/mask.h"
#include "kiln/ops/matte.h"
#include "kiln/ops/normalize.h"
#include "kiln/ops/preprocess.h"
#include "kiln/ops/probability.h"
#include "kiln/ops/quality.h"
#include "kiln/ops/render.h"
#include "kiln/ops/resize.h"
#include "kiln/ops/warp.h"

namespace kiln {

// Windows of one series -> `out` (count images of the params' size and dtype, 1 channel).
inline Status render(const RenderParams& params, const WindowBatch& windows, const BatchView& out,
                     const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  KILN_TRY(render_validate(params, windows));
  const RenderCall call(params, windows, out);
  return op_run(call.call(), exec, report);
}

// Inputs and outputs: same channels (1, 3, 4), type (u8 or f32) and layout, pairwise; sizes may differ per image.
inline Status resize(const ResizeParams& params, const VarShapeBatchView& in, const VarShapeBatchView& out,
                     const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  return op_run(OpCall{OpKind::kResize, &params, in, out, nullptr}, exec, report);
}

// Same type (u8, f16 or f32) and size in and out, pairwise.
inline Status color_convert(const ColorParams& params, const VarShapeBatchView& in, const VarShapeBatchView& out,
                            const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  return op_run(OpCall{OpKind::kColor, &params, in, out, nullptr}, exec, report);
}

// in: u8 HWC, 1/3/4 channels, any sizes. out: f32 or f16, HWC or CHW, same channels; its sizes are the targets.
inline Status preprocess(const PreprocessParams& params, const VarShapeBatchView& in, const VarShapeBatchView& out,
                         const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  return op_run(OpCall{OpKind::kPreprocess, &params, in, out, nullptr}, exec, report);
}

inline Status normalize(const NormalizeParams& params, const VarShapeBatchView& in, const VarShapeBatchView& out,
                        const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  return op_run(OpCall{OpKind::kNormalize, &params, in, out, nullptr}, exec, report);
}

// Fills results[i] (score included) for every image of `in` (u8).
inline Status quality_measure(const QualityParams& params, const VarShapeBatchView& in, QualityMetrics* results,
                              const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  return op_run(OpCall{OpKind::kQuality, &params, in, VarShapeBatchView{}, results}, exec, report);
}

// u8 HWC, 1/3/4 channels; out has the same shapes (it may be the input batch itself).
inline Status enhance(const EnhanceParams& params, const VarShapeBatchView& in, const VarShapeBatchView& out,
                      const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  return op_run(OpCall{OpKind::kEnhance, &params, in, out, nullptr}, exec, report);
}

// u8 or f32 HWC, same channels and type pairwise; output sizes are the targets.
inline Status warp_affine(const WarpParams& params, const VarShapeBatchView& in, const VarShapeBatchView& out,
                          const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  return op_run(OpCall{OpKind::kWarp, &params, in, out, nullptr}, exec, report);
}

inline Status mask_postprocess(const MaskParams& params, const VarShapeBatchView& in, const VarShapeBatchView& out,
                               const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  return op_run(OpCall{OpKind::kMask, &params, in, out, nullptr}, exec, report);
}

// in: f32 1-channel probability maps; out: u8 1-channel images, any sizes (each its map's matte at that size).
// person_counts (in.count of them, host memory), when given: each matte's person pixels.
inline Status matte_render(const MatteParams& params, const VarShapeBatchView& in, const VarShapeBatchView& out,
                           const ExecOptions& exec = {}, ExecReport* report = nullptr,
                           int64_t* person_counts = nullptr) {
  return op_run(OpCall{OpKind::kMatte, &params, in, out, person_counts}, exec, report);
}

// in: model outputs (f32/f16, C channels); out: f32 1-channel maps of the same sizes (their previous smoothed maps
// on entry when params.temporal > 0).
inline Status probability_maps(const ProbabilityParams& params, const VarShapeBatchView& in, const VarShapeBatchView& out,
                               const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  return op_run(OpCall{OpKind::kProbability, &params, in, out, nullptr}, exec, report);
}

// u8 HWC, 1/3/4 channels; out has the same shapes (it may be the input batch itself).
inline Status blur(const BlurParams& params, const VarShapeBatchView& in, const VarShapeBatchView& out,
                   const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  return op_run(OpCall{OpKind::kBlur, &params, in, out, nullptr}, exec, report);
}

}  // namespace kiln
