// QDQ insertion. Activations: x -> QuantizeLinear -> DequantizeLinear -> every reader (a graph output keeps its
// name on the DequantizeLinear, so the last op can be fused too). Weights: symmetric int8 per output channel
// (axis 0 for Conv, the output axis for Gemm), stored quantized behind a DequantizeLinear. Biases: int32 at input
// scale x weight scale, zero point 0, which is what QLinearConv adds in its accumulator. Constant inputs of Add,
// Mul and Concat: quantized like activations, with their own range.
#include "infer/precision/model_qdq.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln {

namespace {

struct Weight {
  std::string dq_output;
  std::vector<float> scales;
};

class QdqWriter {
 public:
  QdqWriter(onnx::ModelProto* model, const QdqPlan& plan, ModelQuantizeReport* report)
      : m_graph(model->mutable_graph()), m_plan(plan), m_report(report), m_names(*m_graph) {
    m_inits = onnx_initializers(m_graph);
  }

  Status run() {
    const OnnxUses uses = onnx_uses(*m_graph);
    for (const std::string& t : m_plan.activations) activation_add(t, uses);
    const int count = m_graph->node_size();
    for (int i = 0; i < count; ++i) {
      if (m_plan.nodes.count(m_graph->node(i).name()) != 0) KILN_TRY(node_inputs(i));
    }
    return Status::ok();
  }

 private:
  int32_t act_qtype() const { return m_plan.activations_int8 ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8; }

  std::string scalar_add(const std::string& base, float scale) {
    const std::string name = m_names.fresh(base);
    *m_graph->add_initializer() = onnx_tensor_floats_make(name, {}, {scale});
    return name;
  }
  std::string zero_point_add(const std::string& base, int32_t type, const std::vector<int32_t>& values, bool vector) {
    const std::string name = m_names.fresh(base);
    std::vector<int64_t> dims;
    if (vector) dims.push_back(static_cast<int64_t>(values.size()));
    if (type == onnx::TensorProto::INT32) {
      *m_graph->add_initializer() = onnx_tensor_make(name, type, dims, values.data(), values.size() * sizeof(int32_t));
    } else {
      std::vector<uint8_t> bytes(values.size());
      for (size_t i = 0; i < values.size(); ++i) bytes[i] = static_cast<uint8_t>(values[i]);
      *m_graph->add_initializer() = onnx_tensor_make(name, type, dims, bytes.data(), bytes.size());
    }
    return name;
  }
  onnx::NodeProto* node_add(const char* op, const std::string& base, std::vector<std::string> inputs,
                            const std::string& output, int64_t axis = -1) {
    onnx::NodeProto* node = m_graph->add_node();
    node->set_op_type(op);
    node->set_name(m_names.fresh(base));
    for (auto& in : inputs) node->add_input(std::move(in));
    node->add_output(output);
    if (axis >= 0) {
      auto* a = node->add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(axis);
    }
    if (std::string(op) == "QuantizeLinear") ++m_report->quantize_nodes;
    else ++m_report->dequantize_nodes;
    return node;
  }

  void activation_add(const std::string& t, const OnnxUses& uses) {
    const QdqParams& p = m_plan.params.at(t);
    const std::string scale = scalar_add(t + "_scale", p.scale);
    const std::string zp = zero_point_add(t + "_zero_point", act_qtype(), {p.zero_point}, false);
    const std::string quantized = m_names.fresh(t + "_QuantizeLinear_Output");
    std::string source = t, dequantized;
    if (uses.graph_outputs.count(t) != 0 && uses.producer.count(t) != 0) {
      // The graph output keeps its name, now written by the DequantizeLinear.
      source = m_names.fresh(t + "_QuantizeLinear_Input");
      for (auto& out : *m_graph->mutable_node(uses.producer.at(t))->mutable_output()) {
        if (out == t) out = source;
      }
      onnx_inputs_rename(m_graph, t, source);
      dequantized = t;
    } else {
      dequantized = m_names.fresh(t + "_DequantizeLinear_Output");
      onnx_inputs_rename(m_graph, t, dequantized);
    }
    node_add("QuantizeLinear", t + "_QuantizeLinear", {source, scale, zp}, quantized);
    node_add("DequantizeLinear", t + "_DequantizeLinear", {quantized, scale, zp}, dequantized);
    m_scales[dequantized] = p.scale;
  }

  // Symmetric int8 weights, per channel along `axis` (-1: one scale). With a bias, each channel's scale is kept
  // large enough that bias / (input scale x weight scale) fits in int32 with room to spare: channels whose weights
  // are all (nearly) zero but whose bias is not, common after batch-norm folding, would overflow it otherwise.
  Result<Weight> weight_add(const std::string& name, int64_t axis, const std::vector<float>& bias, float input_scale) {
    const auto cached = m_weights.find(name);
    if (cached != m_weights.end()) return cached->second;
    const onnx::TensorProto& w = *m_inits.at(name);
    const std::vector<float> values = onnx_tensor_floats(w);
    if (values.empty()) return invalid_argument("weight " + name + " is not a float tensor");
    std::vector<int64_t> dims(w.dims().begin(), w.dims().end());
    const int64_t channels = axis >= 0 ? dims[static_cast<size_t>(axis)] : 1;
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(std::max<int64_t>(axis, 0)) + 1; axis >= 0 && d < dims.size(); ++d) inner *= dims[d];
    const auto channel_of = [&](size_t i) { return axis < 0 ? 0 : static_cast<int64_t>(i / inner) % channels; };
    const float qmax = m_plan.reduce_range ? 63.0f : 127.0f;
    std::vector<float> absmax(static_cast<size_t>(channels), 0.0f);
    for (size_t i = 0; i < values.size(); ++i) {
      float& m = absmax[static_cast<size_t>(channel_of(i))];
      m = std::max(m, std::fabs(values[i]));
    }
    Weight out;
    constexpr double kBiasLimit = 1 << 30;
    for (size_t c = 0; c < absmax.size(); ++c) {
      double scale = absmax[c] / qmax;
      for (size_t k = 0; k < bias.size(); ++k) {
        if (bias.size() == absmax.size() ? k == c : true) {
          scale = std::max(scale, std::fabs(static_cast<double>(bias[k])) / (static_cast<double>(input_scale) * kBiasLimit));
        }
      }
      // Below float's normal range a scale is not worth its denormal arithmetic: such weights are zeros.
      out.scales.push_back(scale >= 1e-30 && std::isfinite(scale) ? static_cast<float>(scale) : 1.0f);
    }
    std::vector<int8_t> q(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      const float v = std::nearbyint(values[i] / out.scales[static_cast<size_t>(channel_of(i))]);
      q[i] = static_cast<int8_t>(std::clamp(v, -qmax, qmax));
    }
    const std::string stored = m_names.fresh(name + "_quantized");
    *m_graph->add_initializer() = onnx_tensor_make(stored, onnx::TensorProto::INT8, dims, q.data(), q.size());
    const std::string scale = m_names.fresh(name + "_scale");
    *m_graph->add_initializer() =
        onnx_tensor_floats_make(scale, axis >= 0 ? std::vector<int64_t>{channels} : std::vector<int64_t>{}, out.scales);
    const std::string zp = zero_point_add(name + "_zero_point", onnx::TensorProto::INT8,
                                          std::vector<int32_t>(static_cast<size_t>(channels), 0), axis >= 0);
    out.dq_output = m_names.fresh(name + "_DequantizeLinear_Output");
    node_add("DequantizeLinear", name + "_DequantizeLinear", {stored, scale, zp}, out.dq_output, axis >= 0 ? axis : -1);
    ++m_report->weights;
    m_weights[name] = out;
    return out;
  }

  // int32 bias at input scale x weight scale per channel.
  Result<std::string> bias_add(const std::string& name, float input_scale, const Weight& weight, bool per_channel) {
    const std::vector<float> values = onnx_tensor_floats(*m_inits.at(name));
    if (values.empty() || (values.size() != weight.scales.size() && weight.scales.size() != 1)) {
      return invalid_argument("bias " + name + " does not match its weight's channels");
    }
    std::vector<float> scales(values.size());
    std::vector<int32_t> q(values.size());
    for (size_t c = 0; c < values.size(); ++c) {
      scales[c] = input_scale * weight.scales[weight.scales.size() == 1 ? 0 : c];
      const double v = std::nearbyint(static_cast<double>(values[c]) / scales[c]);
      q[c] = static_cast<int32_t>(std::clamp<double>(v, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
    }
    const std::string stored = m_names.fresh(name + "_quantized");
    *m_graph->add_initializer() = onnx_tensor_make(stored, onnx::TensorProto::INT32,
                                                   {static_cast<int64_t>(q.size())}, q.data(), q.size() * sizeof(int32_t));
    std::string scale;
    if (per_channel) {
      scale = m_names.fresh(name + "_scale");
      *m_graph->add_initializer() = onnx_tensor_floats_make(scale, {static_cast<int64_t>(scales.size())}, scales);
    } else {
      scale = scalar_add(name + "_scale", scales[0]);
    }
    const std::string zp = zero_point_add(name + "_zero_point", onnx::TensorProto::INT32,
                                          std::vector<int32_t>(per_channel ? q.size() : 1, 0), per_channel);
    const std::string out = m_names.fresh(name + "_DequantizeLinear_Output");
    node_add("DequantizeLinear", name + "_DequantizeLinear", {stored, scale, zp}, out, per_channel ? 0 : -1);
    return out;
  }

  // A float constant read as an activation (Add/Mul/Concat): its own range, the activations' type.
  std::string constant_add(const std::string& name) {
    const auto cached = m_constants.find(name);
    if (cached != m_constants.end()) return cached->second;
    const std::vector<float> values = onnx_tensor_floats(*m_inits.at(name));
    TensorRange r{0, 0};
    if (!values.empty()) {
      const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
      r = {*lo, *hi};
    }
    const QdqParams p = qdq_activation_params(r, m_plan.activations_int8);
    const float qmin = m_plan.activations_int8 ? -128.0f : 0.0f, qmax = m_plan.activations_int8 ? 127.0f : 255.0f;
    std::vector<uint8_t> q(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      const float v = std::clamp(std::nearbyint(values[i] / p.scale) + static_cast<float>(p.zero_point), qmin, qmax);
      q[i] = m_plan.activations_int8 ? static_cast<uint8_t>(static_cast<int8_t>(v)) : static_cast<uint8_t>(v);
    }
    const onnx::TensorProto& t = *m_inits.at(name);
    const std::string stored = m_names.fresh(name + "_quantized");
    *m_graph->add_initializer() =
        onnx_tensor_make(stored, act_qtype(), std::vector<int64_t>(t.dims().begin(), t.dims().end()), q.data(), q.size());
    const std::string scale = scalar_add(name + "_scale", p.scale);
    const std::string zp = zero_point_add(name + "_zero_point", act_qtype(), {p.zero_point}, false);
    const std::string out = m_names.fresh(name + "_DequantizeLinear_Output");
    node_add("DequantizeLinear", name + "_DequantizeLinear", {stored, scale, zp}, out);
    m_constants[name] = out;
    return out;
  }

  static int64_t attribute_int(const onnx::NodeProto& node, const char* name, int64_t fallback) {
    for (const auto& a : node.attribute()) {
      if (a.name() == name) return a.i();
    }
    return fallback;
  }

  Status node_inputs(int index) {
    onnx::NodeProto* node = m_graph->mutable_node(index);
    const std::string& op = node->op_type();
    const bool weighted = op == "Conv" || op == "Gemm" || op == "MatMul";
    Weight weight;
    for (int k = 0; k < node->input_size(); ++k) {
      const std::string in = node->input(k);
      if (in.empty() || m_inits.count(in) == 0 || m_inits.at(in)->data_type() != onnx::TensorProto::FLOAT) continue;
      if (weighted && k == 1) {
        int64_t axis = -1;
        if (m_plan.per_channel && op == "Conv") axis = 0;
        if (m_plan.per_channel && op == "Gemm") axis = attribute_int(*node, "transB", 0) != 0 ? 0 : 1;
        std::vector<float> bias;
        float input_scale = 1.0f;
        if (node->input_size() > 2 && m_inits.count(node->input(2)) != 0) {
          bias = onnx_tensor_floats(*m_inits.at(node->input(2)));
          const auto scale = m_scales.find(node->input(0));
          if (scale != m_scales.end()) input_scale = scale->second;
        }
        KILN_TRY_ASSIGN(weight, weight_add(in, axis, bias, input_scale));
        node->set_input(1, weight.dq_output);
      } else if (weighted && k == 2) {
        const auto scale = m_scales.find(node->input(0));
        if (scale == m_scales.end()) return invalid_argument("node " + node->name() + ": its input is not quantized");
        if (weight.scales.empty()) return invalid_argument("node " + node->name() + ": its weight is not quantized");
        KILN_TRY_ASSIGN(const std::string b, bias_add(in, scale->second, weight, weight.scales.size() > 1));
        node->set_input(2, b);
      } else if (op == "Add" || op == "Mul" || op == "Concat") {
        node->set_input(k, constant_add(in));
      }
    }
    return Status::ok();
  }

  onnx::GraphProto* m_graph;
  const QdqPlan& m_plan;
  ModelQuantizeReport* m_report;
  OnnxNames m_names;
  std::map<std::string, onnx::TensorProto*> m_inits;
  std::map<std::string, Weight> m_weights;
  std::map<std::string, std::string> m_constants;
  std::map<std::string, float> m_scales;  // activation scale of each DequantizeLinear output
};

}  // namespace

QdqParams qdq_activation_params(const TensorRange& range, bool int8) {
  const double qmin = int8 ? -128.0 : 0.0, qmax = int8 ? 127.0 : 255.0;
  const double rmin = std::min<double>(range.min, 0.0), rmax = std::max<double>(range.max, 0.0);
  QdqParams p;
  if (!(rmax > rmin)) return p;  // a constant 0: any scale, zero point 0 (uint8) or 0 (int8)
  p.scale = static_cast<float>((rmax - rmin) / (qmax - qmin));
  p.zero_point = static_cast<int32_t>(std::clamp(std::nearbyint(qmin - rmin / p.scale), qmin, qmax));
  return p;
}

Status qdq_insert(onnx::ModelProto* model, const QdqPlan& plan, ModelQuantizeReport* report) {
  QdqWriter writer(model, plan, report);
  KILN_TRY(writer.run());
  onnx::GraphProto* graph = model->mutable_graph();
  onnx_initializers_prune(graph);
  return onnx_nodes_sort(graph);
}

}  // namespace kiln
