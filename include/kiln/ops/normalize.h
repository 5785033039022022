// Channel-wise normalization of an f32 NCHW batch: out[c] = (in[c] - mean[c]) / std[c] (the predecessor's
// "batch norm kernel"). `out` may be `in` (in place).
#pragma once

#include <vector>

#include "kiln/image.h"
#include "kiln/exec.h"

namespace kiln {

struct NormalizeParams {
  std::vector<float> mean;  // one per channel
  std::vector<float> std;   // one per channel, non-zero
};

inline Status normalize(const NormalizeParams& params, const VarShapeBatchView& in, const VarShapeBatchView& out,
                        const ExecOptions& exec = {}, ExecReport* report = nullptr) {
  return op_run(OpCall{OpKind::kNormalize, &params, in, out, nullptr}, exec, report);
}

}  // namespace kiln
