// Whether a batch fits a model's first input: what every InferSession run checks before ONNX Runtime sees it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kiln/infer.h"

namespace kiln {

// InvalidArgument naming `label` when the model has more than one input or a non-float32 one, or when `shape`
// (batch first) does not fit the input's rank and fixed dimensions, or `input` does not hold shape's elements.
Status infer_input_check(const ModelInfo& info, const std::string& label, std::span<const float> input,
                         const std::vector<int64_t>& shape);

}  // namespace kiln
