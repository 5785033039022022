#include "apps/serve/grpc_tensors.h"

#include <algorithm>

#include "apps/serve/serve_tensors.h"

namespace kiln::serve {

namespace {

// The typed contents field of the datatype as floats; InvalidArgument when it holds another count than `elements`.
template <typename Repeated>
Result<std::vector<float>> grpc_typed_values(const Repeated& values, const char* field, int64_t elements,
                                             float most = 0) {
  if (static_cast<int64_t>(values.size()) != elements) {
    return invalid_argument(std::to_string(values.size()) + " values in contents." + field + " for a shape of " +
                            std::to_string(elements) + " elements");
  }
  std::vector<float> out;
  out.reserve(static_cast<size_t>(values.size()));
  for (const auto value : values) {
    if (most > 0 && static_cast<float>(value) > most) {
      return invalid_argument(std::string("contents.") + field + ": " + std::to_string(value) +
                              " is out of UINT8's range");
    }
    out.push_back(static_cast<float>(value));
  }
  return out;
}

Result<std::vector<float>> grpc_contents_values(const inference::InferTensorContents& contents,
                                                const std::string& datatype, int64_t elements) {
  if (datatype == "FP32") return grpc_typed_values(contents.fp32_contents(), "fp32_contents", elements);
  if (datatype == "INT64") return grpc_typed_values(contents.int64_contents(), "int64_contents", elements);
  if (datatype == "INT32") return grpc_typed_values(contents.int_contents(), "int_contents", elements);
  if (datatype == "UINT8") return grpc_typed_values(contents.uint_contents(), "uint_contents", elements, 255.0f);
  return invalid_argument("datatype " + datatype + " is not served (FP32, INT64, INT32, UINT8)");
}

bool grpc_contents_given(const inference::InferTensorContents& c) {
  return c.bool_contents_size() + c.int_contents_size() + c.int64_contents_size() + c.uint_contents_size() +
             c.uint64_contents_size() + c.fp32_contents_size() + c.fp64_contents_size() + c.bytes_contents_size() >
         0;
}

}  // namespace

Result<InferInputTensor> grpc_input_tensor(const inference::ModelInferRequest& request, int index) {
  const auto& input = request.inputs(index);
  InferInputTensor tensor;
  tensor.name = input.name();
  tensor.datatype = input.datatype();
  tensor.shape.assign(input.shape().begin(), input.shape().end());
  const std::string where = "inputs[" + std::to_string(index) + "] (" + tensor.name + "): ";
  auto elements = tensor_shape_elements(tensor.shape);
  if (!elements.is_ok()) return invalid_argument(where + "shape: " + elements.status().message());
  const bool raw = request.raw_input_contents_size() > 0;
  if (raw && request.raw_input_contents_size() != request.inputs_size()) {
    return invalid_argument("raw_input_contents holds " + std::to_string(request.raw_input_contents_size()) +
                            " entries for " + std::to_string(request.inputs_size()) + " inputs");
  }
  const bool typed = input.has_contents() && grpc_contents_given(input.contents());
  if (raw && typed) return invalid_argument(where + "contents and raw_input_contents are both given");
  Result<std::vector<float>> values =
      raw ? tensor_raw_values(request.raw_input_contents(index), tensor.datatype, elements.value())
          : grpc_contents_values(input.contents(), tensor.datatype, elements.value());
  if (!values.is_ok()) return invalid_argument(where + values.status().message());
  tensor.data = std::move(values).value();
  return tensor;
}

void grpc_outputs_fill(const std::vector<Tensor>& outputs, const std::vector<std::string>& wanted,
                       inference::ModelInferResponse* response) {
  for (const Tensor& tensor : outputs) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), tensor.name) == wanted.end()) continue;
    auto* output = response->add_outputs();
    output->set_name(tensor.name);
    output->set_datatype(tensor_output_datatype(tensor));
    for (const int64_t dim : tensor.shape) output->add_shape(dim);
    response->add_raw_output_contents(tensor_output_bytes(tensor));
  }
}

}  // namespace kiln::serve
