// Tensors as raw bytes, the form shared by gRPC's raw_input_contents / raw_output_contents and REST's binary tensor
// data extension: each element little-endian, row-major, no padding. Pure functions (no sockets, no models), so the
// fuzz harness drives them too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/infer.h"
#include "kiln/status.h"

namespace kiln::serve {

// "onnxruntime_onnx" datatype names of the protocol: FP32, UINT8, INT32, INT64 (BYTES for others).
const char* oip_datatype(TensorType type);

// Elements of a shape of non-negative dimensions; InvalidArgument for a negative or too large one.
Result<int64_t> tensor_shape_elements(const std::vector<int64_t>& shape);

// Bytes of one element of FP32, INT64, INT32 or UINT8 (the datatypes kiln serves); 0 for any other.
size_t tensor_datatype_size(const std::string& datatype);

// The values of `elements` elements of `datatype` held in `bytes`, as floats (the form ModelService runs).
// InvalidArgument naming the datatype, or the byte count against the one the shape needs.
Result<std::vector<float>> tensor_raw_values(std::string_view bytes, const std::string& datatype, int64_t elements);

// An output's protocol datatype: FP32 for float outputs, its integer type for outputs kept exactly.
const char* tensor_output_datatype(const Tensor& tensor);

// An output's raw bytes in its protocol datatype.
std::string tensor_output_bytes(const Tensor& tensor);

}  // namespace kiln::serve
