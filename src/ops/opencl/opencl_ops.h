// Ops on OpenCL: the context every family's host code gets for one call, var-shape batches in device buffers, and
// the op table: one supports/run pair per family (defined in opencl_<family>.cpp around <family>.cl).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/buffer_pool.h"
#include "kiln/device.h"
#include "kiln/ops.h"
#include "ops/image_px.h"
#include "ops/opencl/opencl_buffers.h"
#include "ops/opencl/opencl_runtime.h"

namespace kiln::opencl {

// One stream's kernel objects, by kernel name (cl_kernel arguments are per object, so kernels are never shared
// between streams).
struct OpKernels {
  std::map<std::string, ClHandle<cl_kernel>> kernels;
};

// What a family's OpenCL host code works with during one call.
struct OpContext {
  const OpenclRuntime& runtime;
  cl_command_queue queue;  // in-order, with profiling: the call's stream
  BufferPool& pool;        // device buffers (use through CallBuffers)
  OpKernels& kernels;      // the stream's
  OpTimings* timings;      // filled when not null (families that time their commands)

  const OpenclDevice& device() const { return runtime.device; }
  // The kernel `kernel_name` of the program `program_name` built from `source` (an embedded
  // <name>_program::kSource), built once per device per process; DeviceError with the build log.
  Result<cl_kernel> kernel(const char* program_name, const char* source, const char* kernel_name);
  // A kernel of an already built program (the runtime's render program).
  Result<cl_kernel> kernel(cl_program program, const char* kernel_name);
};

// A var-shape batch in one device buffer: each image packed (HWC rows, or CHW planes, back to back), described by
// `descs` (a device copy of `host_descs`, KilnImageDesc offsets relative to `pixels`).
struct DeviceBatch {
  cl_mem pixels = nullptr;
  cl_mem descs = nullptr;
  std::vector<KilnImageDesc> host_descs;
  int64_t count = 0;
  int32_t max_width = 0;
  int32_t max_height = 0;
};

// Host images (any strides) -> a new device batch (non-blocking writes on ctx.queue; the host memory must stay
// valid until the call finishes, which it does: calls end with a blocking read or clFinish).
Result<DeviceBatch> batch_upload(OpContext& ctx, CallBuffers& buffers, const VarShapeBatchView& in);
// A device batch with the shapes of `out` (contents undefined).
Result<DeviceBatch> batch_alloc(OpContext& ctx, CallBuffers& buffers, const VarShapeBatchView& out);
// Reads `batch` back into the host images of `out` (same shapes; any strides) and waits for the queue.
Status batch_download(OpContext& ctx, const DeviceBatch& batch, const VarShapeBatchView& out);
// A device copy of `bytes` bytes of host memory (per-image parameters: matrices, rectangles).
Result<cl_mem> buffer_upload(OpContext& ctx, CallBuffers& buffers, const void* data, size_t bytes, const char* what);
// Enqueues `kernel` over a 3-D range (x, y, image), rounded up to the work-group size (kernels check bounds).
Status launch_3d(OpContext& ctx, cl_kernel kernel, size_t x, size_t y, size_t images);

// A family's row of the OpenCL op table. Families run on host batches only (OpenCL 1.2 buffers are not pointers).
struct OpenclOp {
  OpKind op;
  bool (*supports)(const OpCall& call, const OpenclDevice& device);
  Status (*run)(OpContext& ctx, const OpCall& call);
};

// The OpenCL row of `op`, or nullptr.
const OpenclOp* opencl_op_find(OpKind op);

// A family's entry points on OpenCL: <family>_opencl_supports and <family>_opencl (its row of the table).
#define KILN_OPENCL_FAMILY(family)                                                \
  bool family##_opencl_supports(const OpCall& call, const OpenclDevice& device); \
  Status family##_opencl(OpContext& ctx, const OpCall& call)

KILN_OPENCL_FAMILY(render);
KILN_OPENCL_FAMILY(resize);
KILN_OPENCL_FAMILY(color);
KILN_OPENCL_FAMILY(preprocess);
KILN_OPENCL_FAMILY(normalize);
KILN_OPENCL_FAMILY(quality);
KILN_OPENCL_FAMILY(enhance);
KILN_OPENCL_FAMILY(warp);
KILN_OPENCL_FAMILY(mask);
KILN_OPENCL_FAMILY(matte);
KILN_OPENCL_FAMILY(probability);
KILN_OPENCL_FAMILY(blur);

}  // namespace kiln::opencl
