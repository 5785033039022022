// The small value types of kiln/infer.h: a tensor's shape as text, its element count, a report as JSON.
#include <nlohmann/json.hpp>

#include "infer/ort_values.h"
#include "kiln/infer.h"

namespace kiln {

std::string TensorInfo::shape_text() const {
  std::string text;
  for (size_t d = 0; d < shape.size(); ++d) {
    const std::string dim = shape[d] >= 0                           ? std::to_string(shape[d])
                            : d < dim_names.size() && !dim_names[d].empty() ? dim_names[d]
                                                                    : "?";
    text += (d ? " x " : "") + dim;
  }
  return text;
}

int64_t Tensor::elements() const { return elements_of(shape); }

std::string InferReport::json() const {
  return nlohmann::json{{"provider", provider}, {"placement", placement}, {"fallbacks", fallbacks},
                        {"batch_dynamic", batch_dynamic}, {"bound_runs", bound_runs},
                        {"device_input_runs", device_input_runs},
                        {"device_output_runs", device_output_runs}, {"oom_halvings", oom_halvings},
                        {"batch_limit", batch_limit}}
      .dump();
}

}  // namespace kiln
