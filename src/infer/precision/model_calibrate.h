// Calibration: the range of values each chosen tensor of a model takes on real inputs, measured by running the
// model on ONNX Runtime's CPU provider with those tensors added as graph outputs.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "infer/precision/onnx_graph.h"

namespace kiln {

struct TensorRange {
  float min = 0;
  float max = 0;
};

// min/max over every value of every input, or with kPercentile the options.percentile share of a 2048-bin
// histogram over that min/max (a second pass). Tensors that never came back (not float) are left out.
Result<std::map<std::string, TensorRange>> model_ranges_collect(const onnx::ModelProto& model,
                                                                const std::set<std::string>& tensors,
                                                                const std::vector<Tensor>& inputs,
                                                                const ModelQuantizeOptions& options);

}  // namespace kiln
