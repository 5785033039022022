// OpenCL plumbing shared by the OpenCL backend: error conversion, owning handles, device enumeration and the
// process-wide cache of one context + built render program per device (building takes seconds on PoCL).
// C API only; nothing here throws.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/device.h"
#include "kiln/status.h"

namespace kiln::opencl {

// "CL_OUT_OF_RESOURCES" etc.; "CL error <n>" for codes it does not know.
std::string opencl_error_name(cl_int code);
// OutOfMemory for allocation failures (CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_HOST_MEMORY), else DeviceError;
// the message is "<what>: <error name>".
Status opencl_status(cl_int code, const std::string& what);

}  // namespace kiln::opencl

// Returns the converted Status from the enclosing function when an OpenCL call fails.
#define KILN_CL_CHECK(call)                                                                    \
  do {                                                                                         \
    const cl_int kiln_cl_err_ = (call);                                                        \
    if (kiln_cl_err_ != CL_SUCCESS) return ::kiln::opencl::opencl_status(kiln_cl_err_, #call); \
  } while (0)

namespace kiln::opencl {

inline void opencl_object_release(cl_mem object) { clReleaseMemObject(object); }
inline void opencl_object_release(cl_kernel object) { clReleaseKernel(object); }
inline void opencl_object_release(cl_program object) { clReleaseProgram(object); }
inline void opencl_object_release(cl_command_queue object) { clReleaseCommandQueue(object); }
inline void opencl_object_release(cl_context object) { clReleaseContext(object); }
inline void opencl_object_release(cl_event object) { clReleaseEvent(object); }

// Owns one reference to an OpenCL object; empty by default.
template <typename T>
class ClHandle {
 public:
  ClHandle() = default;
  explicit ClHandle(T object) : m_object(object) {}
  ~ClHandle() { reset(); }
  ClHandle(const ClHandle&) = delete;
  ClHandle& operator=(const ClHandle&) = delete;
  ClHandle(ClHandle&& other) noexcept : m_object(std::exchange(other.m_object, nullptr)) {}
  ClHandle& operator=(ClHandle&& other) noexcept {
    if (this != &other) {
      reset();
      m_object = std::exchange(other.m_object, nullptr);
    }
    return *this;
  }

  T get() const { return m_object; }
  T* out() {  // for APIs that return the object through a pointer (events)
    reset();
    return &m_object;
  }
  explicit operator bool() const { return m_object != nullptr; }
  T release() { return std::exchange(m_object, nullptr); }  // the caller now owns the reference
  void reset(T object = nullptr) {
    if (m_object != nullptr) opencl_object_release(m_object);
    m_object = object;
  }

 private:
  T m_object = nullptr;
};

// One OpenCL device kiln may use, with what the backend reports and checks.
struct OpenclDevice {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_device_type type = 0;
  std::string name;
  std::string vendor;
  std::string version;  // CL_DEVICE_VERSION
  int64_t global_memory = 0;
  uint64_t max_alloc = 0;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE
  int32_t compute_units = 0;
  bool correctly_rounded_divide_sqrt = false;  // CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT in CL_DEVICE_SINGLE_FP_CONFIG
};

// The devices options.device_id indexes: platforms x devices of type GPU or ACCELERATOR, plus CPU devices when
// options.opencl_allow_cpu_devices. DeviceError with the reason when there is no platform, no such device, or the
// chosen device cannot reproduce the CPU's arithmetic; InvalidArgument when device_id is out of range.
Result<OpenclDevice> opencl_device_select(const BackendOptions& options);

// A context on one device and the render program built for it.
struct OpenclRuntime {
  OpenclDevice device;
  ClHandle<cl_context> context;
  ClHandle<cl_program> program;
};

// The runtime of `device`, created and built once per process and then shared (backends created later reuse the
// context and program). DeviceError with the build log when the program does not build.
Result<std::shared_ptr<const OpenclRuntime>> opencl_runtime_get(const OpenclDevice& device);

// Rows of a render tile (one work-item renders KILN_TILE_ROWS rows of one column); passed to the program build.
inline constexpr int32_t kTileRows = 64;

}  // namespace kiln::opencl
