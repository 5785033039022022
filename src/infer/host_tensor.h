// A float tensor in pooled host memory (HostBlock: pinned when a session runs on CUDA): what InferSession::run_bound
// binds a model's outputs to, so that ONNX Runtime writes them in place and nothing is allocated per batch.
#pragma once

#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "core/backend_block.h"

namespace kiln {

struct HostTensor {
  std::string name;
  std::vector<int64_t> shape;
  HostBlock memory;  // at least elements() floats

  int64_t elements() const {
    return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
  }
  float* data() const { return static_cast<float*>(memory.data()); }
  std::span<const float> values() const { return {data(), static_cast<size_t>(elements())}; }
};

}  // namespace kiln
