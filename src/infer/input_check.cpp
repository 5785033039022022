#include "infer/input_check.h"

#include <algorithm>

#include "infer/ort_values.h"

namespace kiln {

Status infer_input_check(const ModelInfo& info, const std::string& label, std::span<const float> input,
                         const std::vector<int64_t>& shape) {
  if (info.inputs.size() != 1) {
    return invalid_argument(label + " has " + std::to_string(info.inputs.size()) +
                            " inputs; kiln runs models with one input");
  }
  const TensorInfo& want = info.inputs[0];
  if (want.type != TensorType::kFloat32) {
    return invalid_argument(label + ": input " + want.name + " is " + tensor_type_name(want.type) +
                            "; kiln feeds float32");
  }
  bool fits = shape.size() == want.shape.size() && !shape.empty() &&
              std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 1; });
  for (size_t d = 1; fits && d < shape.size(); ++d) fits = want.shape[d] < 0 || want.shape[d] == shape[d];
  if (fits && want.shape[0] > 1) fits = shape[0] == want.shape[0];
  if (!fits) {
    return invalid_argument(label + ": input " + want.name + " is " + want.shape_text() + ", given " +
                            shape_text_of(shape));
  }
  if (static_cast<int64_t>(input.size()) != elements_of(shape)) {
    return invalid_argument(label + ": the input holds " + std::to_string(input.size()) + " values, shape " +
                            shape_text_of(shape) + " needs " + std::to_string(elements_of(shape)));
  }
  return Status::ok();
}

}  // namespace kiln
