// ONNX Runtime's descriptions and values in kiln's terms: a session's inputs and outputs as TensorInfo, an output
// value as a float Tensor.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/infer.h"

namespace kiln {

ModelInfo model_info_of(Ort::Session& session);
int64_t elements_of(const std::vector<int64_t>& shape);
std::string shape_text_of(const std::vector<int64_t>& shape);  // "1 x 3 x 256 x 256"
// Copies an output value into a float tensor (integer outputs are converted).
Status tensor_from_value(const std::string& name, const Ort::Value& value, Tensor* out);
// One item's outputs (a run of batch 1) appended to `outputs`, the batch's so far (empty before the first; room for
// `batch` items is reserved then); UnsupportedFormat naming `label` for an output without one row per item.
Status item_outputs_append(std::vector<Tensor> item, int64_t batch, const std::string& label,
                           std::vector<Tensor>* outputs);

}  // namespace kiln
