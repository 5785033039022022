#include "infer/oom_halving.h"

namespace kiln {

Status tensors_join(const std::vector<Tensor>& first, int64_t first_items, const std::vector<Tensor>& second,
                    int64_t second_items, const std::string& label, std::vector<Tensor>* outputs) {
  outputs->resize(first.size());
  for (size_t k = 0; k < first.size(); ++k) {
    const Tensor& a = first[k];
    const Tensor& b = second.at(k);
    if (!halves_joinable(a.shape, first_items, b.shape, second_items)) {
      return unsupported_format(label + ": output " + a.name + " has no row per item, so a batch that ran out of " +
                                "memory cannot be run in halves");
    }
    Tensor& out = (*outputs)[k];
    out.name = a.name;
    out.shape = a.shape;
    out.shape[0] = first_items + second_items;
    out.data.resize(a.data.size() + b.data.size());
    std::copy(a.data.begin(), a.data.end(), out.data.begin());
    std::copy(b.data.begin(), b.data.end(), out.data.begin() + static_cast<std::ptrdiff_t>(a.data.size()));
  }
  return Status::ok();
}

}  // namespace kiln
