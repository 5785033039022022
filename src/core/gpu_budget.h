// GPU_MEMORY_LIMIT_GB is the whole process's: kiln's own device pool (batches, staging) gets a quarter of it, and the
// one ONNX Runtime arena that every model session shares gets the rest, so that the faces pipeline's two or three
// sessions and the pool together stay within it (each used to get the whole limit).
#pragma once

#include <cstdint>

namespace kiln {

struct GpuBudget {
  uint64_t pool_bytes = 0;    // kiln's CUDA pool; 0 = no limit
  uint64_t models_bytes = 0;  // ONNX Runtime's shared CUDA arena; 0 = no limit
};

inline GpuBudget gpu_budget_split(uint64_t limit_bytes) {
  if (limit_bytes == 0) return {};
  const uint64_t pool = limit_bytes / 4;
  return {pool, limit_bytes - pool};
}

}  // namespace kiln
