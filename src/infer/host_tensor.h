// A float tensor in pooled host memory (HostBlock: pinned when a session runs on CUDA): what InferSession::run_bound
// binds a model's outputs to, so that ONNX Runtime writes them in place and nothing is allocated per batch. An
// integer output (never bound) also keeps its values exactly in `exact`, as Tensor does.
#pragma once

#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "core/backend_block.h"
#include "kiln/infer.h"

namespace kiln {

struct HostTensor {
  std::string name;
  std::vector<int64_t> shape;
  HostBlock memory;  // at least elements() floats
  TensorType type = TensorType::kFloat32;
  std::vector<uint8_t> exact;  // integer types: elements() values of tensor_type_exact_size(type) bytes

  int64_t elements() const {
    return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
  }
  float* data() const { return static_cast<float*>(memory.data()); }
  std::span<const float> values() const { return {data(), static_cast<size_t>(elements())}; }
};

}  // namespace kiln
