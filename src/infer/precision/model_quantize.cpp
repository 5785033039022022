// Static int8 quantization: opset 13, float rewrites, calibration of every float activation, the plan (which nodes
// run on integers in ONNX Runtime, which tensors get Q/DQ and with which scale), then the QDQ rewrite.
#include <algorithm>

#include "infer/precision/model_qdq.h"

namespace kiln {

namespace {

// Ops ONNX Runtime's CPU provider runs as QLinear kernels when they sit between DQ inputs and a Q output, and
// which of their inputs are activations ("all": every float input).
bool op_compute(const std::string& op) {
  static const std::set<std::string> ops = {"Conv", "Gemm", "MatMul", "Add", "Mul", "Concat", "Sigmoid",
                                            "AveragePool", "GlobalAveragePool", "LeakyRelu", "Softmax"};
  return ops.count(op) != 0;
}
// Ops whose QDQ pairs ONNX Runtime drops when input and output share a scale: they move or pick values.
bool op_data_movement(const std::string& op) {
  static const std::set<std::string> ops = {"MaxPool", "Resize", "Reshape", "Transpose", "Flatten", "Squeeze",
                                            "Unsqueeze"};
  return ops.count(op) != 0;
}
// Activations ending at a Q whose range already clips like they do.
bool op_removable(const std::string& op) { return op == "Relu" || op == "Clip"; }

struct Planner {
  onnx::GraphProto* graph;
  const std::map<std::string, TensorRange>& ranges;
  const std::map<std::string, onnx::TensorProto*>& inits;
  std::set<std::string> exclude;

  bool is_init(const std::string& t) const { return inits.count(t) != 0; }
  bool float_init(const std::string& t) const {
    return is_init(t) && inits.at(t)->data_type() == onnx::TensorProto::FLOAT;
  }
  bool calibrated(const std::string& t) const { return ranges.count(t) != 0; }

  // The activation inputs of a compute node it can be quantized with, or false.
  bool compute_inputs(const onnx::NodeProto& node, std::vector<std::string>* acts) const {
    const std::string& op = node.op_type();
    if (!op_compute(op) || exclude.count(node.name()) != 0 || node.output_size() != 1) return false;
    if (!calibrated(node.output(0))) return false;
    if (op == "Conv" || op == "Gemm" || op == "MatMul") {
      if (node.input_size() < 2 || !float_init(node.input(1)) || !calibrated(node.input(0))) return false;
      const int rank = inits.at(node.input(1))->dims_size();
      if ((op == "Conv" && rank < 3) || (op != "Conv" && rank != 2)) return false;
      if (node.input_size() > 2 && !node.input(2).empty()) {
        // QLinearConv / QGemm take an int32 bias of one value per output channel only.
        const onnx::TensorProto* w = inits.at(node.input(1));
        bool trans_b = false;
        for (const auto& a : node.attribute()) trans_b = trans_b || (a.name() == "transB" && a.i() != 0);
        const int64_t channels = op == "Gemm" && !trans_b ? w->dims(1) : w->dims(0);
        if (!float_init(node.input(2)) || inits.at(node.input(2))->dims_size() != 1 ||
            inits.at(node.input(2))->dims(0) != channels) {
          return false;
        }
      }
      acts->push_back(node.input(0));
      return true;
    }
    const int used = (op == "Add" || op == "Mul" || op == "Concat") ? node.input_size() : 1;
    for (int k = 0; k < used; ++k) {
      const std::string& in = node.input(k);
      if (float_init(in)) continue;  // a constant: quantized with its own range
      if (is_init(in) || !calibrated(in)) return false;
      acts->push_back(in);
    }
    return true;
  }
};

// The output head: from each graph output back through nodes without weights (activations, bias adds, reshapes), to
// and including the first node with a weight tensor; at most kHeadDepth nodes deep. A mask's decision boundary lies
// in its logits, and 8 bits of them move it: selfie on the test video, mask IoU against fp32 0.83 -> 0.89 with the
// head in float, at the same speed.
constexpr int kHeadDepth = 8;

std::set<std::string> output_head(const onnx::GraphProto& graph,
                                  const std::map<std::string, onnx::TensorProto*>& inits) {
  const OnnxUses uses = onnx_uses(graph);
  std::set<std::string> head;
  std::vector<std::pair<std::string, int>> todo;  // tensor, depth
  for (const auto& out : graph.output()) todo.emplace_back(out.name(), 0);
  while (!todo.empty()) {
    const auto [tensor, depth] = todo.back();
    todo.pop_back();
    const auto producer = uses.producer.find(tensor);
    if (producer == uses.producer.end() || depth >= kHeadDepth) continue;
    const onnx::NodeProto& node = graph.node(producer->second);
    if (!head.insert(node.name()).second) continue;
    const bool weighted = std::any_of(node.input().begin(), node.input().end(), [&](const std::string& in) {
      const auto it = inits.find(in);
      return it != inits.end() && it->second->dims_size() >= 2;
    });
    if (weighted) continue;
    for (const auto& in : node.input()) {
      if (!in.empty() && inits.count(in) == 0) todo.emplace_back(in, depth + 1);
    }
  }
  return head;
}

}  // namespace

Result<ModelBytes> model_int8_quantize(const ModelBytes& bytes, const std::vector<Tensor>& calibration,
                                       const ModelQuantizeOptions& options, ModelQuantizeReport* report) {
  if (calibration.empty()) return invalid_argument("quantization needs calibration inputs (none given)");
  KILN_TRY_ASSIGN(onnx::ModelProto model, onnx_model_parse(bytes, "model"));
  ModelQuantizeReport r;
  r.calibration_items = static_cast<int64_t>(calibration.size());
  r.opset_from = onnx_opset(model);
  KILN_TRY(onnx_opset_upgrade(&model, 13));  // per-channel QuantizeLinear / DequantizeLinear (axis)
  r.opset_to = onnx_opset(model);
  KILN_TRY_ASSIGN(r.folded, onnx_graph_fold(&model));
  onnx::GraphProto* graph = model.mutable_graph();
  {
    OnnxNames names(*graph);
    for (auto& node : *graph->mutable_node()) {
      if (node.name().empty()) node.set_name(names.fresh(node.op_type()));
    }
  }

  // Calibrate every float activation: graph inputs and node outputs.
  const std::map<std::string, int32_t> types = onnx_tensor_types(model);
  std::set<std::string> floats;
  auto inits = onnx_initializers(graph);
  const auto is_float = [&](const std::string& t) {
    const auto it = types.find(t);
    return it != types.end() && it->second == onnx::TensorProto::FLOAT && inits.count(t) == 0;
  };
  for (const auto& v : graph->input()) {
    if (is_float(v.name())) floats.insert(v.name());
  }
  for (const auto& node : graph->node()) {
    for (const auto& out : node.output()) {
      if (is_float(out)) floats.insert(out);
    }
  }
  KILN_TRY_ASSIGN(const auto ranges, model_ranges_collect(model, floats, calibration, options));

  Planner planner{graph, ranges, inits, {options.exclude_nodes.begin(), options.exclude_nodes.end()}};
  if (!options.quantize_head) {
    for (const std::string& name : output_head(*graph, inits)) {
      r.head_nodes += planner.exclude.insert(name).second ? 1 : 0;
    }
  }
  QdqPlan plan;
  plan.activations_int8 = options.activations_int8;
  plan.per_channel = options.per_channel;
  plan.reduce_range = options.reduce_range;
  for (const auto& node : graph->node()) {
    std::vector<std::string> acts;
    if (planner.compute_inputs(node, &acts)) plan.nodes.insert(node.name());
  }
  // Relu / Clip right after a quantized node: its range goes to that node's output and the node goes (like
  // quantize_static). Clip only with a floor <= 0, so that the asymmetric range (which holds 0) clips the same.
  {
    const OnnxUses uses = onnx_uses(*graph);
    std::set<int> drop;
    for (int i = 0; i < graph->node_size(); ++i) {
      const onnx::NodeProto& act = graph->node(i);
      if (!op_removable(act.op_type()) || planner.exclude.count(act.name()) != 0 || act.input_size() < 1) continue;
      const std::string& in = act.input(0);
      const auto producer = uses.producer.find(in);
      const auto readers = uses.consumers.find(in);
      if (producer == uses.producer.end() || plan.nodes.count(graph->node(producer->second).name()) == 0 ||
          readers == uses.consumers.end() || readers->second.size() != 1 || uses.graph_outputs.count(in) != 0 ||
          !planner.calibrated(act.output(0))) {
        continue;
      }
      if (act.op_type() == "Clip" && act.input_size() > 1 && !act.input(1).empty()) {
        const auto floor = planner.float_init(act.input(1)) ? onnx_tensor_floats(*inits.at(act.input(1)))
                                                            : std::vector<float>{};
        if (floor.size() != 1 || floor[0] > 0.0f) continue;
      }
      graph->mutable_node(producer->second)->set_output(0, act.output(0));
      drop.insert(i);
    }
    onnx_nodes_remove(graph, drop);
    r.removed_activations = static_cast<int64_t>(drop.size());
  }
  // Tensors with Q/DQ, in graph order: the compute nodes' activations and outputs, then data movement behind them.
  std::set<std::string> chosen;
  const auto choose = [&](const std::string& t, const QdqParams& p) {
    if (chosen.insert(t).second) {
      plan.activations.push_back(t);
      plan.params[t] = p;
    }
  };
  const auto params_of = [&](const std::string& t) { return qdq_activation_params(ranges.at(t), plan.activations_int8); };
  for (const auto& node : graph->node()) {
    std::vector<std::string> acts;
    if (plan.nodes.count(node.name()) != 0 && planner.compute_inputs(node, &acts)) {
      for (const auto& a : acts) choose(a, params_of(a));
      choose(node.output(0), params_of(node.output(0)));
    } else if (op_data_movement(node.op_type()) && node.output_size() == 1 && chosen.count(node.input(0)) != 0 &&
               planner.exclude.count(node.name()) == 0) {
      plan.nodes.insert(node.name());
      choose(node.output(0), plan.params.at(node.input(0)));
    } else {
      plan.nodes.erase(node.name());
    }
  }
  std::set<std::string> float_types;
  for (const auto& node : graph->node()) {
    if (plan.nodes.count(node.name()) != 0) {
      ++r.quantized_nodes;
    } else {
      ++r.float_nodes;
      float_types.insert(node.op_type());
    }
  }
  r.float_op_types.assign(float_types.begin(), float_types.end());
  KILN_TRY(qdq_insert(&model, plan, &r));
  model.set_producer_name("kiln model quantize");
  KILN_TRY(onnx_model_check(model, "quantized model"));
  if (report != nullptr) *report = r;
  return onnx_model_serialize(model);
}

}  // namespace kiln
