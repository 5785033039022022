#include "apps/serve/serve_tensors.h"

#include <cstring>

namespace kiln::serve {

namespace {

template <typename T>
void tensor_append_values(std::string_view bytes, std::vector<float>* out) {
  for (size_t offset = 0; offset + sizeof(T) <= bytes.size(); offset += sizeof(T)) {
    T value;
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    out->push_back(static_cast<float>(value));
  }
}

}  // namespace

const char* oip_datatype(TensorType type) {
  switch (type) {
    case TensorType::kFloat32: return "FP32";
    case TensorType::kUInt8: return "UINT8";
    case TensorType::kInt32: return "INT32";
    case TensorType::kInt64: return "INT64";
    default: return "BYTES";
  }
}

Result<int64_t> tensor_shape_elements(const std::vector<int64_t>& shape) {
  int64_t elements = 1;
  for (const int64_t dim : shape) {
    if (dim < 0) return invalid_argument("a shape's dimensions must be at least 0");
    if (dim > (int64_t{1} << 31)) return invalid_argument("shape too large");
    elements *= dim;
    if (elements > (int64_t{1} << 31)) return invalid_argument("shape too large");
  }
  return elements;
}

size_t tensor_datatype_size(const std::string& datatype) {
  if (datatype == "FP32" || datatype == "INT32") return 4;
  if (datatype == "INT64") return 8;
  if (datatype == "UINT8") return 1;
  return 0;
}

Result<std::vector<float>> tensor_raw_values(std::string_view bytes, const std::string& datatype, int64_t elements) {
  const size_t size = tensor_datatype_size(datatype);
  if (size == 0) return invalid_argument("datatype " + datatype + " is not served (FP32, INT64, INT32, UINT8)");
  const auto expected = static_cast<size_t>(elements) * size;
  if (bytes.size() != expected) {
    return invalid_argument(std::to_string(bytes.size()) + " bytes for a shape of " + std::to_string(elements) +
                            " " + datatype + " elements (" + std::to_string(expected) + " bytes)");
  }
  std::vector<float> values;
  values.reserve(static_cast<size_t>(elements));
  if (datatype == "FP32") {
    values.resize(static_cast<size_t>(elements));
    if (expected > 0) std::memcpy(values.data(), bytes.data(), expected);
  } else if (datatype == "INT64") {
    tensor_append_values<int64_t>(bytes, &values);
  } else if (datatype == "INT32") {
    tensor_append_values<int32_t>(bytes, &values);
  } else {
    tensor_append_values<uint8_t>(bytes, &values);
  }
  return values;
}

const char* tensor_output_datatype(const Tensor& tensor) {
  return tensor.exact.empty() ? "FP32" : oip_datatype(tensor.type);
}

std::string tensor_output_bytes(const Tensor& tensor) {
  if (!tensor.exact.empty()) return std::string(tensor.exact.begin(), tensor.exact.end());
  std::string bytes(tensor.data.size() * sizeof(float), '\0');
  if (!bytes.empty()) std::memcpy(bytes.data(), tensor.data.data(), bytes.size());
  return bytes;
}

}  // namespace kiln::serve
