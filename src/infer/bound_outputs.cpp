#include "infer/bound_outputs.h"

#include <algorithm>

#include "infer/oom_halving.h"

namespace kiln {

namespace {

// A block of at least `elements` floats for `out`, keeping one that is large enough.
Status block_fit(HostTensor& out, Backend& backend) {
  const size_t bytes = static_cast<size_t>(out.elements()) * sizeof(float);
  if (out.memory.bytes() >= bytes && bytes > 0) return Status::ok();
  out.memory.reset();
  KILN_TRY_ASSIGN(out.memory, HostBlock::acquire(backend, std::max<size_t>(bytes, 1)));
  return Status::ok();
}

}  // namespace

void BoundOutputs::learn(const std::vector<int64_t>& input_item, int64_t batch, const std::vector<Tensor>& outputs,
                         const std::vector<TensorInfo>& declared) {
  m_input_item = input_item;
  m_bindable = outputs.size() == declared.size();
  m_output_items.clear();
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Tensor& t = outputs[k];
    m_bindable = m_bindable && declared[k].type == TensorType::kFloat32 && !t.shape.empty() && t.shape[0] == batch;
    m_output_items.emplace_back(t.shape.begin() + (t.shape.empty() ? 0 : 1), t.shape.end());
  }
}

Status BoundOutputs::prepare(int64_t batch, const std::vector<std::string>& names, Backend& backend,
                             std::vector<HostTensor>* outputs) const {
  outputs->resize(names.size());
  for (size_t k = 0; k < outputs->size(); ++k) {
    HostTensor& out = (*outputs)[k];
    out.name = names[k];
    out.shape = shape_of(k, batch);
    out.type = TensorType::kFloat32;  // bound outputs are float32 (bindable())
    out.exact.clear();
    KILN_TRY(block_fit(out, backend));
  }
  return Status::ok();
}

std::vector<int64_t> BoundOutputs::shape_of(size_t k, int64_t batch) const {
  std::vector<int64_t> shape = {batch};
  shape.insert(shape.end(), m_output_items[k].begin(), m_output_items[k].end());
  return shape;
}

Status BoundOutputs::copy(const std::vector<Tensor>& copied, Backend& backend, std::vector<HostTensor>* outputs) {
  outputs->resize(copied.size());
  for (size_t k = 0; k < copied.size(); ++k) {
    HostTensor& out = (*outputs)[k];
    out.name = copied[k].name;
    out.shape = copied[k].shape;
    KILN_TRY(block_fit(out, backend));
    std::copy(copied[k].data.begin(), copied[k].data.end(), out.data());
    out.type = copied[k].type;
    out.exact = copied[k].exact;
  }
  return Status::ok();
}

Status BoundOutputs::join(const std::vector<HostTensor>& first, int64_t first_items,
                          const std::vector<HostTensor>& second, int64_t second_items, const std::string& label,
                          Backend& backend, std::vector<HostTensor>* outputs) {
  outputs->resize(first.size());
  for (size_t k = 0; k < first.size(); ++k) {
    const HostTensor& a = first[k];
    const HostTensor& b = second.at(k);
    if (!halves_joinable(a.shape, first_items, b.shape, second_items)) {
      return unsupported_format(label + ": output " + a.name + " has no row per item, so a batch that ran out of " +
                                "memory cannot be run in halves");
    }
    HostTensor& out = (*outputs)[k];
    out.name = a.name;
    out.shape = a.shape;
    out.shape[0] = a.shape[0] + b.shape[0];
    KILN_TRY(block_fit(out, backend));
    std::copy_n(a.data(), a.elements(), out.data());
    std::copy_n(b.data(), b.elements(), out.data() + a.elements());
    out.type = a.type;
    out.exact = a.exact;
    out.exact.insert(out.exact.end(), b.exact.begin(), b.exact.end());
  }
  return Status::ok();
}

}  // namespace kiln
