// What InferSession::run_bound keeps between batches: the outputs' shapes learned from the first batch of an input
// size (later batches of that size are bound in place), and the host tensors it fills, copies and joins.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "infer/host_tensor.h"
#include "kiln/infer.h"

namespace kiln {

class BoundOutputs {
 public:
  void reset() { *this = BoundOutputs(); }
  // The outputs' shapes are known for batches of this per-item input shape.
  bool learned(const std::vector<int64_t>& input_item) const {
    return !m_output_items.empty() && m_input_item == input_item;
  }
  // Known, and every output float32 with one row per item: it can be bound.
  bool bindable() const { return m_bindable; }
  // From an unbound run of `batch` items whose inputs had `input_item` as their per-item shape.
  void learn(const std::vector<int64_t>& input_item, int64_t batch, const std::vector<Tensor>& outputs,
             const std::vector<TensorInfo>& declared);
  // `outputs` shaped for `batch` items (names in the model's order), each with a block large enough.
  Status prepare(int64_t batch, const std::vector<std::string>& names, Backend& backend,
                 std::vector<HostTensor>* outputs) const;

  // Output k's shape for a batch of `batch` items (bindable()).
  std::vector<int64_t> shape_of(size_t k, int64_t batch) const;
  size_t count() const { return m_output_items.size(); }

  // Copies an unbound run's outputs.
  static Status copy(const std::vector<Tensor>& copied, Backend& backend, std::vector<HostTensor>* outputs);
  // The outputs of a batch's two halves (of `first_items` and `second_items`), one after the other;
  // UnsupportedFormat naming `label` for an output without one row per item.
  static Status join(const std::vector<HostTensor>& first, int64_t first_items, const std::vector<HostTensor>& second,
                     int64_t second_items, const std::string& label, Backend& backend,
                     std::vector<HostTensor>* outputs);

 private:
  std::vector<int64_t> m_input_item;
  bool m_bindable = false;
  std::vector<std::vector<int64_t>> m_output_items;  // each output's shape after its batch dimension
};

}  // namespace kiln
