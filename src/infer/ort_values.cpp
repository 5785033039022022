#include "infer/ort_values.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace kiln {

namespace {

TensorType tensor_type_of(ONNXTensorElementDataType type) {
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return TensorType::kFloat32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: return TensorType::kUInt8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return TensorType::kInt32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return TensorType::kInt64;
    default: return TensorType::kOther;
  }
}

TensorInfo tensor_info_of(std::string name, const Ort::TypeInfo& type_info) {
  TensorInfo info;
  info.name = std::move(name);
  if (type_info.GetONNXType() != ONNX_TYPE_TENSOR) {
    info.type = TensorType::kOther;  // a sequence or a map: kiln neither feeds nor writes these
    return info;
  }
  const auto tensor = type_info.GetTensorTypeAndShapeInfo();
  info.type = tensor_type_of(tensor.GetElementType());
  info.shape = tensor.GetShape();
  for (const char* dim : tensor.GetSymbolicDimensions()) info.dim_names.emplace_back(dim ? dim : "");
  return info;
}

}  // namespace

ModelInfo model_info_of(Ort::Session& session) {
  ModelInfo info;
  Ort::AllocatorWithDefaultOptions allocator;
  for (size_t i = 0; i < session.GetInputCount(); ++i) {
    info.inputs.push_back(tensor_info_of(session.GetInputNameAllocated(i, allocator).get(), session.GetInputTypeInfo(i)));
  }
  for (size_t i = 0; i < session.GetOutputCount(); ++i) {
    info.outputs.push_back(tensor_info_of(session.GetOutputNameAllocated(i, allocator).get(), session.GetOutputTypeInfo(i)));
  }
  info.batch_dynamic = !info.inputs.empty() && std::all_of(info.inputs.begin(), info.inputs.end(), [](const TensorInfo& t) {
    return !t.shape.empty() && t.shape[0] < 0;
  });
  return info;
}

int64_t elements_of(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

std::string shape_text_of(const std::vector<int64_t>& shape) {
  std::string text;
  for (const int64_t d : shape) text += (text.empty() ? "" : " x ") + std::to_string(d);
  return text;
}

Status tensor_from_value(const std::string& name, const Ort::Value& value, Tensor* out) {
  if (!value.IsTensor()) return unsupported_format("output " + name + " is not a tensor (a sequence or a map)");
  const auto info = value.GetTensorTypeAndShapeInfo();
  out->name = name;
  out->shape = info.GetShape();
  const size_t n = info.GetElementCount();
  out->data.resize(n);
  const auto keep_exact = [&](const auto* values) {
    std::copy_n(values, n, out->data.begin());
    out->exact.resize(n * sizeof(*values));
    std::memcpy(out->exact.data(), values, out->exact.size());
  };
  out->type = tensor_type_of(info.GetElementType());
  out->exact.clear();
  switch (info.GetElementType()) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: std::copy_n(value.GetTensorData<float>(), n, out->data.begin()); break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: keep_exact(value.GetTensorData<uint8_t>()); break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: keep_exact(value.GetTensorData<int32_t>()); break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: keep_exact(value.GetTensorData<int64_t>()); break;
    default: return unsupported_format("output " + name + ": element type " + std::to_string(info.GetElementType()) +
                                       " is not float32, uint8, int32 or int64");
  }
  return Status::ok();
}

Status item_outputs_append(std::vector<Tensor> item, int64_t batch, const std::string& label,
                           std::vector<Tensor>* outputs) {
  if (outputs->empty()) {
    for (const Tensor& t : item) {
      if (t.shape.empty() || t.shape[0] != 1) {
        return unsupported_format(label + ": output " + t.name + " is not one row per item (shape " +
                                  shape_text_of(t.shape) + "), so items cannot be run one at a time");
      }
    }
    *outputs = std::move(item);
    for (auto& t : *outputs) t.data.reserve(t.data.size() * batch);
    return Status::ok();
  }
  for (size_t k = 0; k < item.size(); ++k) {
    Tensor& all = (*outputs)[k];
    const auto& one = item[k].shape;
    if (one.empty() || one[0] != 1 || one.size() != all.shape.size() ||
        !std::equal(one.begin() + 1, one.end(), all.shape.begin() + 1)) {
      return unsupported_format(label + ": output " + all.name + " is not one row per item (shape " +
                                shape_text_of(item[k].shape) + "), so items cannot be run one at a time");
    }
    all.data.insert(all.data.end(), item[k].data.begin(), item[k].data.end());
    all.shape[0] += 1;
  }
  return Status::ok();
}

}  // namespace kiln
