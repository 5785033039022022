// fp16 storage of a model's weights: each large float initializer becomes float16 plus a Cast back to float32, so
// the graph computes exactly as before on the rounded weights, with the same input and output types.
#include <cmath>

#include "infer/precision/onnx_graph.h"
#include "ops/image_px.h"

namespace kiln {

Result<ModelBytes> model_fp16_convert(const ModelBytes& bytes, const ModelFp16Options& options,
                                      ModelFp16Report* report) {
  KILN_TRY_ASSIGN(onnx::ModelProto model, onnx_model_parse(bytes, "model"));
  ModelFp16Report r;
  onnx::GraphProto* graph = model.mutable_graph();
  OnnxNames names(*graph);
  std::set<std::string> graph_inputs;
  for (const auto& v : graph->input()) graph_inputs.insert(v.name());
  google::protobuf::RepeatedPtrField<onnx::NodeProto> casts;
  for (auto& init : *graph->mutable_initializer()) {
    if (init.data_type() != onnx::TensorProto::FLOAT) continue;
    const std::vector<float> values = onnx_tensor_floats(init);
    // An initializer that is also a graph input can be overridden by the caller with float32 data: keep it.
    bool fits = !values.empty() && static_cast<int64_t>(values.size()) >= options.min_elements &&
                graph_inputs.count(init.name()) == 0;
    for (size_t i = 0; fits && i < values.size(); ++i) fits = std::isfinite(values[i]) && std::fabs(values[i]) <= 65504.0f;
    if (!fits) {
      ++r.kept_fp32;
      continue;
    }
    std::vector<uint16_t> half(values.size());
    for (size_t i = 0; i < values.size(); ++i) half[i] = static_cast<uint16_t>(kiln_float_to_half(values[i]));
    const std::string name = init.name();
    const std::string stored = names.fresh(name + "_fp16");
    std::vector<int64_t> dims(init.dims().begin(), init.dims().end());
    init = onnx_tensor_make(stored, onnx::TensorProto::FLOAT16, dims, half.data(), half.size() * sizeof(uint16_t));
    onnx::NodeProto* cast = casts.Add();
    cast->set_op_type("Cast");
    cast->set_name(names.fresh(name + "_cast"));
    cast->add_input(stored);
    cast->add_output(name);  // readers keep the float32 name
    auto* to = cast->add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(onnx::TensorProto::FLOAT);
    ++r.converted;
    r.bytes_converted += static_cast<int64_t>(values.size() * sizeof(float));
  }
  // The Casts come first: every node after them reads the float32 names as before.
  for (auto& node : *graph->mutable_node()) *casts.Add() = std::move(node);
  graph->mutable_node()->Swap(&casts);
  // value_info entries of the old initializers would now describe node outputs the same way: still float32.
  KILN_TRY(onnx_model_check(model, "fp16 model"));
  if (report != nullptr) *report = r;
  return onnx_model_serialize(model);
}

}  // namespace kiln
