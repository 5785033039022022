#include <random>

#include "kiln/infer.h"

namespace kiln {

std::vector<float> infer_random_input(const ModelInfo& info, int64_t batch, uint32_t seed, std::vector<int64_t>* shape) {
  *shape = info.inputs.empty() ? std::vector<int64_t>{} : info.inputs[0].shape;
  if (shape->empty()) return {};
  (*shape)[0] = batch;
  int64_t n = 1;
  for (int64_t& d : *shape) {
    d = d < 0 ? 1 : d;
    n *= d;
  }
  std::vector<float> input(static_cast<size_t>(n));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& v : input) v = uniform(rng);
  return input;
}

}  // namespace kiln
