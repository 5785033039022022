// Float rewrites before quantization. Converters (TF.js, Keras, MediaPipe) leave biases as separate Adds and Relu6
// as Relu(x) - Relu(x - 6); quantized as they are, each would be one more integer op with its own rounding, and
// ONNX Runtime fuses none of them into QLinearConv. Every rewrite computes the same function in float.
#include <cmath>

#include "infer/precision/onnx_graph.h"

namespace kiln {

namespace {

struct Fold {
  onnx::GraphProto* graph;
  OnnxUses uses;
  std::map<std::string, onnx::TensorProto*> inits;

  // A tensor read by exactly one node and not a graph output: its producer may be rewritten.
  bool private_tensor(const std::string& name) const {
    const auto it = uses.consumers.find(name);
    return it != uses.consumers.end() && it->second.size() == 1 && uses.graph_outputs.count(name) == 0;
  }
  int producer(const std::string& name, const char* op) const {
    const auto it = uses.producer.find(name);
    if (it == uses.producer.end() || graph->node(it->second).op_type() != op) return -1;
    return it->second;
  }
  const onnx::TensorProto* init(const std::string& name) const {
    const auto it = inits.find(name);
    return it == inits.end() ? nullptr : it->second;
  }
};

// A Conv whose weight is an initializer: its output channels and rank, else -1.
int64_t conv_channels(const Fold& f, int conv, int64_t* rank) {
  const onnx::NodeProto& node = f.graph->node(conv);
  if (node.input_size() < 2 || node.output_size() != 1) return -1;
  const onnx::TensorProto* w = f.init(node.input(1));
  if (w == nullptr || w->dims_size() < 3 || w->data_type() != onnx::TensorProto::FLOAT) return -1;
  if (node.input_size() > 2 && !node.input(2).empty()) {
    const onnx::TensorProto* b = f.init(node.input(2));
    if (b == nullptr || b->data_type() != onnx::TensorProto::FLOAT) return -1;
  }
  *rank = w->dims_size();
  return w->dims(0);
}

// The per-channel values of constant `b` added to a rank-`rank` tensor of `channels` channels (dim 1), or empty
// when `b` broadcasts along any other dimension.
std::vector<float> channel_values(const onnx::TensorProto& b, int64_t channels, int64_t rank) {
  std::vector<float> values = onnx_tensor_floats(b);
  if (values.empty() || b.dims_size() > rank) return {};
  const int64_t offset = rank - b.dims_size();
  bool per_channel = false;
  for (int64_t k = 0; k < b.dims_size(); ++k) {
    const int64_t at = k + offset;
    const int64_t d = b.dims(static_cast<int>(k));
    if (d == 1) continue;
    if (at == 1 && d == channels) {
      per_channel = true;
      continue;
    }
    return {};
  }
  if (!per_channel) return std::vector<float>(static_cast<size_t>(channels), values[0]);
  return values;
}

// Adds `values` to the bias of Conv node `conv` (a new initializer: the old one may be shared).
void bias_add(Fold& f, OnnxNames& names, int conv, const std::vector<float>& values) {
  onnx::NodeProto* node = f.graph->mutable_node(conv);
  std::vector<float> bias(values.size(), 0.0f);
  if (node->input_size() > 2 && !node->input(2).empty()) bias = onnx_tensor_floats(*f.init(node->input(2)));
  for (size_t c = 0; c < bias.size(); ++c) bias[c] += values[c];
  const std::string name = names.fresh(node->output(0) + "_bias");
  *f.graph->add_initializer() = onnx_tensor_floats_make(name, {static_cast<int64_t>(bias.size())}, bias);
  while (node->input_size() < 3) node->add_input("");
  node->set_input(2, name);
}

// Add(y, B) with y = Conv(...): B goes into the Conv's bias; also Add(s, B) with s = Add(y, other).
bool fold_bias(Fold& f, OnnxNames& names, int add, std::set<int>* drop) {
  const onnx::NodeProto& node = f.graph->node(add);
  if (node.op_type() != "Add" || node.input_size() != 2) return false;
  for (int side = 0; side < 2; ++side) {
    const onnx::TensorProto* b = f.init(node.input(side));
    const std::string& x = node.input(1 - side);
    if (b == nullptr || f.init(x) != nullptr || !f.private_tensor(x)) continue;
    int conv = f.producer(x, "Conv");
    int residual = -1;
    if (conv < 0 && (residual = f.producer(x, "Add")) >= 0) {
      for (const auto& in : f.graph->node(residual).input()) {
        if (conv < 0 && f.private_tensor(in)) conv = f.producer(in, "Conv");
      }
    }
    int64_t rank = 0;
    const int64_t channels = conv < 0 ? -1 : conv_channels(f, conv, &rank);
    if (channels <= 0) continue;
    const std::vector<float> values = channel_values(*b, channels, rank);
    if (values.empty()) continue;
    bias_add(f, names, conv, values);
    const int last = residual >= 0 ? residual : conv;  // the node that now writes the Add's output
    f.graph->mutable_node(last)->set_output(0, node.output(0));
    drop->insert(add);
    return true;
  }
  return false;
}

// Sub(Relu(x), Relu(Sub(x, c))) = Clip(x, 0, c) for c > 0.
bool fold_relu_n(Fold& f, OnnxNames& names, int sub, std::set<int>* drop) {
  const onnx::NodeProto& node = f.graph->node(sub);
  if (node.op_type() != "Sub" || node.input_size() != 2) return false;
  const int relu = f.producer(node.input(0), "Relu");
  const int excess = f.producer(node.input(1), "Relu");
  if (relu < 0 || excess < 0 || !f.private_tensor(node.input(0)) || !f.private_tensor(node.input(1))) return false;
  const std::string& x = f.graph->node(relu).input(0);
  const std::string& shifted = f.graph->node(excess).input(0);
  const int minus = f.producer(shifted, "Sub");
  if (minus < 0 || !f.private_tensor(shifted) || f.graph->node(minus).input(0) != x) return false;
  const onnx::TensorProto* c = f.init(f.graph->node(minus).input(1));
  const std::vector<float> cv = c == nullptr ? std::vector<float>{} : onnx_tensor_floats(*c);
  if (cv.size() != 1 || !(cv[0] > 0.0f) || !std::isfinite(cv[0])) return false;
  const std::string lo = names.fresh(node.output(0) + "_min");
  const std::string hi = names.fresh(node.output(0) + "_max");
  *f.graph->add_initializer() = onnx_tensor_floats_make(lo, {}, {0.0f});
  *f.graph->add_initializer() = onnx_tensor_floats_make(hi, {}, {cv[0]});
  onnx::NodeProto clip;
  clip.set_op_type("Clip");
  clip.set_name(names.fresh(node.output(0) + "_clip"));
  clip.add_input(x);
  clip.add_input(lo);
  clip.add_input(hi);
  clip.add_output(node.output(0));
  *f.graph->mutable_node(sub) = std::move(clip);
  drop->insert({relu, excess, minus});
  return true;
}

}  // namespace

Result<int64_t> onnx_graph_fold(onnx::ModelProto* model) {
  onnx::GraphProto* graph = model->mutable_graph();
  OnnxNames names(*graph);
  int64_t rewrites = 0;
  for (auto& node : *graph->mutable_node()) {
    if (node.op_type() == "Sum" && node.input_size() == 2) {
      node.set_op_type("Add");
      ++rewrites;
    }
  }
  const bool clip_inputs = onnx_opset(*model) >= 11;  // Clip's min and max are inputs from opset 11
  for (bool changed = true; changed;) {
    changed = false;
    Fold f{graph, onnx_uses(*graph), onnx_initializers(graph)};
    std::set<int> drop;
    for (int i = 0; i < graph->node_size() && !changed; ++i) {
      changed = fold_bias(f, names, i, &drop) || (clip_inputs && fold_relu_n(f, names, i, &drop));
    }
    if (changed) {
      onnx_nodes_remove(graph, drop);
      ++rewrites;
    }
  }
  onnx_initializers_prune(graph);
  KILN_TRY(onnx_nodes_sort(graph));
  return rewrites;
}

}  // namespace kiln
