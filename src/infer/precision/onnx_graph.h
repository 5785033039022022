// Helpers over ONNX's protobuf graph (Debian libonnx) shared by the precision passes: parsing and checking,
// initializers as float arrays, producer and consumer look-ups, fresh names, the opset, tensor element types.
// libonnx reports failures with exceptions; onnx_call turns them into a Status at this boundary.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kiln/precision.h"

namespace kiln {

template <typename Fn>
Status onnx_call(Errc code, const std::string& what, Fn&& fn) {
  try {
    fn();
    return Status::ok();
  } catch (const std::exception& e) {
    return Status(code, what + ": " + text_one_line(e.what()));
  }
}

Result<onnx::ModelProto> onnx_model_parse(const ModelBytes& bytes, const std::string& label);
Result<ModelBytes> onnx_model_serialize(const onnx::ModelProto& model);
// onnx::checker::check_model; InvalidArgument with the checker's message.
Status onnx_model_check(const onnx::ModelProto& model, const std::string& label);

// The default domain's opset version (0 when absent).
int64_t onnx_opset(const onnx::ModelProto& model);
// Converts to `opset` with ONNX's version converter (after shape inference, which some adapters need).
Status onnx_opset_upgrade(onnx::ModelProto* model, int64_t opset);
// Element type of every tensor shape inference can tell (graph inputs, outputs, value_info, initializers).
std::map<std::string, int32_t> onnx_tensor_types(const onnx::ModelProto& model);

// Initializers by name; pointers stay valid until the graph's initializer list changes.
std::map<std::string, onnx::TensorProto*> onnx_initializers(onnx::GraphProto* graph);
// A float initializer's values (raw_data or float_data); empty for another type.
std::vector<float> onnx_tensor_floats(const onnx::TensorProto& tensor);
int64_t onnx_tensor_elements(const onnx::TensorProto& tensor);
onnx::TensorProto onnx_tensor_make(const std::string& name, int32_t type, const std::vector<int64_t>& dims,
                                   const void* data, size_t bytes);
onnx::TensorProto onnx_tensor_floats_make(const std::string& name, const std::vector<int64_t>& dims,
                                          const std::vector<float>& values);

// Nodes reading each tensor (node indices), and the node writing it (-1: a graph input or an initializer).
struct OnnxUses {
  std::map<std::string, std::vector<int>> consumers;
  std::map<std::string, int> producer;
  std::set<std::string> graph_outputs;
};
OnnxUses onnx_uses(const onnx::GraphProto& graph);

// A name not yet used by any tensor or node of `graph`, from `base`.
class OnnxNames {
 public:
  explicit OnnxNames(const onnx::GraphProto& graph);
  std::string fresh(const std::string& base);

 private:
  std::set<std::string> m_used;
};

// Removes the nodes whose indices are in `drop`, keeping the order of the others.
void onnx_nodes_remove(onnx::GraphProto* graph, const std::set<int>& drop);
// Renames every use of tensor `from` as a node input to `to`, except in node `skip`.
void onnx_inputs_rename(onnx::GraphProto* graph, const std::string& from, const std::string& to, int skip = -1);
// Removes initializers no node reads.
void onnx_initializers_prune(onnx::GraphProto* graph);
// Sorts the nodes topologically (stable); InvalidArgument for a cycle.
Status onnx_nodes_sort(onnx::GraphProto* graph);

// Float rewrites that keep the model's function and help quantization (model_fold.cpp): two-input Sum -> Add,
// Conv followed by an Add of a per-channel constant -> Conv bias (also through one residual Add),
// Relu(x) - Relu(x - c) -> Clip(x, 0, c). Returns how many rewrites were made.
Result<int64_t> onnx_graph_fold(onnx::ModelProto* model);

}  // namespace kiln
