// Makes a CUDA device current for a scope and restores the caller's current device after: kiln's CUDA calls run on
// their backend's device (GPU_DEVICE_ID) whatever device the calling thread had current, and leave it current.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kiln {

class CurrentDevice {
 public:
  explicit CurrentDevice(int32_t device) {
    if (cudaGetDevice(&m_previous) != cudaSuccess) {
      (void)cudaGetLastError();
      m_previous = -1;
    }
    m_status = cudaSetDevice(device);
  }
  ~CurrentDevice() {
    if (m_previous >= 0 && cudaSetDevice(m_previous) != cudaSuccess) (void)cudaGetLastError();
  }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;
  cudaError_t status() const { return m_status; }  // of making `device` current

 private:
  int m_previous = -1;
  cudaError_t m_status = cudaSuccess;
};

}  // namespace kiln
