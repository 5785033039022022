// A float tensor in the device memory of the backend a session's GPU provider runs on: what
// InferSession::run_to_device binds a model's outputs to, so that they never leave the device. The block is shared:
// each consumer of an item (a frame of a batch) keeps it alive; a tensor whose block is still held elsewhere gets a
// new one for the next batch.
#pragma once

#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/backend_block.h"
#include "kiln/infer.h"

namespace kiln {

struct DeviceTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::shared_ptr<DeviceBlock> memory;  // at least elements() floats

  int64_t elements() const {
    return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
  }
  float* data() const { return static_cast<float*>(memory->data()); }
};

}  // namespace kiln
