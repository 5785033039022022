// Channel-wise normalization of an f32 NCHW batch: out[c] = (in[c] - mean[c]) / std[c] (the predecessor's
// "batch norm kernel"). `out` may be `in` (in place).
#pragma once

#include <vector>

#include "kiln/image.h"
#include "kiln/ops.h"

namespace kiln {

struct NormalizeParams {
  std::vector<float> mean;  // one per channel
  std::vector<float> std;   // one per channel, non-zero
};

}  // namespace kiln
