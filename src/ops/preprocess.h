// The preprocess op family, internal side: validation, the kernel constants and the per-backend entry points
// (params in include/kiln/ops/preprocess.h, per-pixel math in preprocess_px.h; sampling plans from resize.h).
#pragma once

#include <vector>

#include "kiln/ops/preprocess.h"
#include "ops/preprocess_px.h"
#include "ops/resize.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for preprocess.
Status preprocess_validate(const OpCall& call);
// The per-call constants every backend uses.
KilnPreprocessConsts preprocess_consts(const PreprocessParams& params);
// The picture rows of a packed NV12 view of `view_rows` rows (PreprocessParams::nv12): 2 * view_rows / 3.
int32_t preprocess_nv12_rows(int32_t view_rows);
// Each input's picture, where the sampling plans are made: the whole view, or for NV12 inputs its luma rows.
std::vector<RectI> preprocess_source_rects(const PreprocessParams& params, const VarShapeBatchView& in);
// The CPU implementation (the reference every other backend is compared with).
Status preprocess_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
