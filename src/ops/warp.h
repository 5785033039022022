// The warp op family, internal side: validation, the matrices every backend samples with, and the per-backend
// entry points (params in include/kiln/ops/warp.h, per-pixel math in warp_px.h).
#pragma once

#include <array>
#include <vector>

#include "kiln/ops/warp.h"
#include "ops/image_desc.h"
#include "ops/image_px.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for warp (including a matrix that
// cannot be inverted when it maps source -> destination, and non-finite matrix entries or border values).
Status warp_validate(const OpCall& call);
// The CPU implementation (the reference every other backend is compared with).
Status warp_cpu(const OpCall& call, ThreadPool* pool);

// The destination -> source matrix of each of `count` images: params.matrices as given with inverse_map, else
// their inverses computed in double like cv::invertAffineTransform, then rounded to float.
std::vector<std::array<float, 6>> warp_source_matrices(const WarpParams& params, int64_t count);

// The descriptor of a host image for the _px.h functions (base = image.data, offset 0, the view's strides).

}  // namespace kiln
