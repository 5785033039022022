#include "ops/cpu/cpu_ops.h"

#include <iterator>

#include "ops/blur.h"
#include "ops/color.h"
#include "ops/enhance.h"
#include "ops/mask.h"
#include "ops/matte.h"
#include "ops/normalize.h"
#include "ops/op_table.h"
#include "ops/preprocess.h"
#include "ops/probability.h"
#include "ops/quality.h"
#include "ops/render.h"
#include "ops/resize.h"
#include "ops/warp.h"

namespace kiln {

namespace {

constexpr CpuOp kCpuOps[] = {
    {OpKind::kRender, render_cpu},         {OpKind::kResize, resize_cpu}, {OpKind::kColor, color_cpu},
    {OpKind::kPreprocess, preprocess_cpu}, {OpKind::kNormalize, normalize_cpu}, {OpKind::kQuality, quality_cpu},
    {OpKind::kEnhance, enhance_cpu},       {OpKind::kWarp, warp_cpu},     {OpKind::kMask, mask_cpu},
    {OpKind::kMatte, matte_cpu},           {OpKind::kProbability, probability_cpu},
    {OpKind::kBlur, blur_cpu},
};
static_assert(op_table_unique(kCpuOps));
static_assert(std::size(kCpuOps) == kOpKindCount, "the CPU implements every family");

}  // namespace

const CpuOp* cpu_op_find(OpKind op) { return op_table_find(kCpuOps, op); }

}  // namespace kiln
