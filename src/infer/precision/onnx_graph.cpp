#include "infer/precision/onnx_graph.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <cstring>
#include <deque>

namespace kiln {

Result<onnx::ModelProto> onnx_model_parse(const ModelBytes& bytes, const std::string& label) {
  if (bytes.empty()) return invalid_argument(label + ": the file is empty");
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) return invalid_argument(label + ": over 2 GB (external data is not supported)");
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return invalid_argument(label + ": not an ONNX model, or truncated (protobuf parse failed)");
  }
  if (!model.has_graph() || model.graph().node_size() == 0 || model.graph().output_size() == 0) {
    return invalid_argument(label + ": not an ONNX model, or truncated (no graph, nodes or outputs)");
  }
  for (const auto& init : model.graph().initializer()) {
    if (init.data_location() == onnx::TensorProto::EXTERNAL) {
      return unsupported_format(label + ": initializer " + init.name() + " is kept in an external data file; "
                                "kiln converts self-contained models only");
    }
  }
  KILN_TRY(onnx_model_check(model, label));
  return model;
}

Result<ModelBytes> onnx_model_serialize(const onnx::ModelProto& model) {
  const size_t size = model.ByteSizeLong();
  if (size > static_cast<size_t>(INT32_MAX)) return unsupported_format("the model would be over 2 GB");
  ModelBytes bytes(size);
  if (!model.SerializeToArray(bytes.data(), static_cast<int>(size))) return invalid_argument("model serialization failed");
  return bytes;
}

Status onnx_model_check(const onnx::ModelProto& model, const std::string& label) {
  return onnx_call(Errc::kInvalidArgument, label + ": not a valid ONNX model", [&] { onnx::checker::check_model(model); });
}

int64_t onnx_opset(const onnx::ModelProto& model) {
  for (const auto& op : model.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") return op.version();
  }
  return 0;
}

Status onnx_opset_upgrade(onnx::ModelProto* model, int64_t opset) {
  if (onnx_opset(*model) >= opset) return Status::ok();
  return onnx_call(Errc::kUnsupportedFormat, "converting the model to opset " + std::to_string(opset), [&] {
    onnx::ModelProto typed = *model;
    onnx::shape_inference::InferShapes(typed);
    onnx::ModelProto converted = onnx::version_conversion::ConvertVersion(typed, static_cast<int>(opset));
    converted.mutable_graph()->clear_value_info();
    converted.set_ir_version(std::max<int64_t>(converted.ir_version(), 7));
    *model = std::move(converted);
  });
}

std::map<std::string, int32_t> onnx_tensor_types(const onnx::ModelProto& model) {
  std::map<std::string, int32_t> types;
  onnx::ModelProto typed = model;
  const Status inferred = onnx_call(Errc::kInvalidArgument, "shape inference",
                                    [&] { onnx::shape_inference::InferShapes(typed); });
  (void)inferred;  // what could not be inferred is simply left out
  const auto take = [&](const onnx::ValueInfoProto& v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().elem_type() != 0) {
      types[v.name()] = v.type().tensor_type().elem_type();
    }
  };
  for (const auto& v : typed.graph().input()) take(v);
  for (const auto& v : typed.graph().output()) take(v);
  for (const auto& v : typed.graph().value_info()) take(v);
  for (const auto& t : typed.graph().initializer()) types[t.name()] = t.data_type();
  return types;
}

std::map<std::string, onnx::TensorProto*> onnx_initializers(onnx::GraphProto* graph) {
  std::map<std::string, onnx::TensorProto*> out;
  for (auto& t : *graph->mutable_initializer()) out[t.name()] = &t;
  return out;
}

int64_t onnx_tensor_elements(const onnx::TensorProto& tensor) {
  int64_t n = 1;
  for (const int64_t d : tensor.dims()) n *= d;
  return n;
}

std::vector<float> onnx_tensor_floats(const onnx::TensorProto& tensor) {
  if (tensor.data_type() != onnx::TensorProto::FLOAT) return {};
  const int64_t n = onnx_tensor_elements(tensor);
  std::vector<float> values;
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != static_cast<size_t>(n) * sizeof(float)) return {};
    values.resize(static_cast<size_t>(n));
    if (n > 0) std::memcpy(values.data(), tensor.raw_data().data(), tensor.raw_data().size());
  } else {
    if (tensor.float_data_size() != n) return {};
    values.assign(tensor.float_data().begin(), tensor.float_data().end());
  }
  return values;
}

onnx::TensorProto onnx_tensor_make(const std::string& name, int32_t type, const std::vector<int64_t>& dims,
                                   const void* data, size_t bytes) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (const int64_t d : dims) t.add_dims(d);
  t.set_raw_data(bytes == 0 ? std::string() : std::string(static_cast<const char*>(data), bytes));
  return t;
}

onnx::TensorProto onnx_tensor_floats_make(const std::string& name, const std::vector<int64_t>& dims,
                                          const std::vector<float>& values) {
  return onnx_tensor_make(name, onnx::TensorProto::FLOAT, dims, values.data(), values.size() * sizeof(float));
}

OnnxUses onnx_uses(const onnx::GraphProto& graph) {
  OnnxUses uses;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const auto& in : graph.node(i).input()) {
      if (in.empty()) continue;
      auto& list = uses.consumers[in];
      if (list.empty() || list.back() != i) list.push_back(i);
    }
    for (const auto& out : graph.node(i).output()) uses.producer[out] = i;
  }
  for (const auto& o : graph.output()) uses.graph_outputs.insert(o.name());
  return uses;
}

OnnxNames::OnnxNames(const onnx::GraphProto& graph) {
  for (const auto& n : graph.node()) {
    m_used.insert(n.name());
    for (const auto& s : n.input()) m_used.insert(s);
    for (const auto& s : n.output()) m_used.insert(s);
  }
  for (const auto& t : graph.initializer()) m_used.insert(t.name());
  for (const auto& v : graph.input()) m_used.insert(v.name());
  for (const auto& v : graph.output()) m_used.insert(v.name());
}

std::string OnnxNames::fresh(const std::string& base) {
  std::string name = base;
  for (int k = 1; m_used.count(name) != 0; ++k) name = base + "_" + std::to_string(k);
  m_used.insert(name);
  return name;
}

void onnx_nodes_remove(onnx::GraphProto* graph, const std::set<int>& drop) {
  if (drop.empty()) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (int i = 0; i < graph->node_size(); ++i) {
    if (drop.count(i) == 0) *kept.Add() = std::move(*graph->mutable_node(i));
  }
  graph->mutable_node()->Swap(&kept);
}

void onnx_inputs_rename(onnx::GraphProto* graph, const std::string& from, const std::string& to, int skip) {
  for (int i = 0; i < graph->node_size(); ++i) {
    if (i == skip) continue;
    for (auto& in : *graph->mutable_node(i)->mutable_input()) {
      if (in == from) in = to;
    }
  }
}

void onnx_initializers_prune(onnx::GraphProto* graph) {
  std::set<std::string> read;
  for (const auto& n : graph->node()) read.insert(n.input().begin(), n.input().end());
  for (const auto& o : graph->output()) read.insert(o.name());
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  for (auto& t : *graph->mutable_initializer()) {
    if (read.count(t.name()) != 0) *kept.Add() = std::move(t);
  }
  graph->mutable_initializer()->Swap(&kept);
}

Status onnx_nodes_sort(onnx::GraphProto* graph) {
  const int n = graph->node_size();
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const auto& out : graph->node(i).output()) producer[out] = i;
  }
  std::vector<int> pending(static_cast<size_t>(n), 0);
  std::vector<std::vector<int>> next(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    std::set<int> from;
    for (const auto& in : graph->node(i).input()) {
      const auto it = producer.find(in);
      if (it != producer.end() && it->second != i) from.insert(it->second);
    }
    pending[static_cast<size_t>(i)] = static_cast<int>(from.size());
    for (const int f : from) next[static_cast<size_t>(f)].push_back(i);
  }
  std::set<int> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[static_cast<size_t>(i)] == 0) ready.insert(i);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (const int j : next[static_cast<size_t>(i)]) {
      if (--pending[static_cast<size_t>(j)] == 0) ready.insert(j);
    }
  }
  if (static_cast<int>(order.size()) != n) return invalid_argument("the graph has a cycle");
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  for (const int i : order) *sorted.Add() = std::move(*graph->mutable_node(i));
  graph->mutable_node()->Swap(&sorted);
  return Status::ok();
}

}  // namespace kiln

namespace kiln {

Status model_bytes_check(const ModelBytes& model, const std::string& label) {
  return onnx_model_parse(model, label).status();
}

}  // namespace kiln
