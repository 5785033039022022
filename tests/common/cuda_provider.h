// Whether ONNX Runtime's CUDA provider can run here (a CUDA device and a runtime built with the provider): what the
// tests of a whole job on the GPU need.
#pragma once

#include "kiln/infer.h"

namespace kiln::test {

inline bool cuda_provider_available() {
  for (const ProviderStatus& p : infer_provider_statuses()) {
    if (p.provider == InferProvider::kCuda) return p.available;
  }
  return false;
}

}  // namespace kiln::test
