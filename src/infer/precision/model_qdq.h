// The QDQ form of a planned quantization: QuantizeLinear/DequantizeLinear pairs on activations, int8 weights and
// int32 biases behind DequantizeLinear, the way ONNX Runtime's QDQ selectors expect them (model_qdq.cpp); the plan
// itself (which nodes, which tensors, their scales) is made by model_quantize.cpp.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "infer/precision/model_calibrate.h"

namespace kiln {

struct QdqParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// Asymmetric activation parameters for a calibrated range (widened to hold 0, which must be exact).
QdqParams qdq_activation_params(const TensorRange& range, bool int8);

struct QdqPlan {
  std::set<std::string> nodes;             // node names that become integer ops (ONNX Runtime's QLinear kernels)
  std::vector<std::string> activations;    // tensors that get a QuantizeLinear + DequantizeLinear pair, in order
  std::map<std::string, QdqParams> params;  // of each of them
  bool activations_int8 = false;
  bool per_channel = true;
  bool reduce_range = false;
};

// Rewrites `model` by the plan. Counts the added nodes and int8 weights into *report.
Status qdq_insert(onnx::ModelProto* model, const QdqPlan& plan, ModelQuantizeReport* report);

}  // namespace kiln
