// Shared by the CUDA backend's host code and kernels: the error macro, launch-geometry helpers and NVTX ranges.
// Host-only parts compile with any C++ compiler that sees cuda_runtime.h, so .cpp files may include this too.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "kiln/status.h"

#if KILN_HAS_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace kiln {

// DeviceError "file:line: message (cudaErrorName)". Also clears the runtime's last-error slot, so a non-sticky
// failure (a refused allocation, a bad launch configuration) is not reported again by a later check.
inline Status cuda_error_status(cudaError_t err, const char* file, int line) {
  (void)cudaGetLastError();
  const char* slash = std::strrchr(file, '/');
  return Status(Errc::kDeviceError, std::string(slash != nullptr ? slash + 1 : file) + ":" + std::to_string(line) +
                                        ": " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + ")");
}

template <typename T>
constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

template <typename T>
constexpr T align_up(T value, T alignment) {
  return ceil_div(value, alignment) * alignment;
}

// Blocks of `block_rows` rows over `rows` rows, at most CUDA's 65,535 in grid y (524,280 rows of 8): kernels launched
// so loop their rows, stepping by gridDim.y * blockDim.y.
inline unsigned grid_rows(int64_t rows, int32_t block_rows) {
  constexpr int64_t kMaxGridY = 65535;
  return static_cast<unsigned>(std::min<int64_t>(ceil_div<int64_t>(rows, block_rows), kMaxGridY));
}

// Host-side profiler range (Nsight Systems); a no-op without NVTX.
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) {
#if KILN_HAS_NVTX
    nvtxRangePushA(name);
#else
    (void)name;
#endif
  }
  ~NvtxRange() {
#if KILN_HAS_NVTX
    nvtxRangePop();
#endif
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace kiln

// Wraps every CUDA runtime call in a function returning Status or Result<T>.
#define KILN_CUDA_CHECK(expr)                                                          \
  do {                                                                                 \
    const cudaError_t kiln_cuda_err_ = (expr);                                         \
    if (kiln_cuda_err_ != cudaSuccess) {                                               \
      return ::kiln::cuda_error_status(kiln_cuda_err_, __FILE__, __LINE__);            \
    }                                                                                  \
  } while (0)
