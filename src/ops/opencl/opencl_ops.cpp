#include "ops/opencl/opencl_ops.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <utility>

#include "core/fault.h"
#include "ops/image_desc.h"
#include "ops/op_table.h"

namespace kiln::opencl {

namespace {

std::string build_log(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return "";
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS) return "";
  return log;
}

// Programs built per (context, name), kept for the process (PoCL takes seconds to build one).
Result<cl_program> program_get(const OpenclRuntime& runtime, const char* name, const char* source) {
  // Leaked on purpose, like the runtime cache: releasing from static destructors races the ICD's teardown.
  static auto* mutex = new std::mutex();
  static auto* cache = new std::map<std::pair<cl_context, std::string>, cl_program>();
  std::lock_guard<std::mutex> lock(*mutex);
  const auto key = std::make_pair(runtime.context.get(), std::string(name));
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  cl_int err = CL_SUCCESS;
  ClHandle<cl_program> program(clCreateProgramWithSource(runtime.context.get(), 1, &source, nullptr, &err));
  if (err != CL_SUCCESS) return opencl_status(err, "clCreateProgramWithSource");
  // Correctly rounded division and sqrt, no contraction (the program says FP_CONTRACT OFF): the CPU's results.
  err = clBuildProgram(program.get(), 1, &runtime.device.device, "-cl-fp32-correctly-rounded-divide-sqrt", nullptr,
                       nullptr);
  if (err != CL_SUCCESS) {
    return Status(Errc::kDeviceError, std::string("building the OpenCL ") + name + " program for '" +
                                          runtime.device.name + "' failed: " + opencl_error_name(err) + "\n" +
                                          build_log(program.get(), runtime.device.device));
  }
  cl_program built = program.release();  // the cache owns it from here
  cache->emplace(key, built);
  return built;
}

Result<DeviceBatch> batch_describe(OpContext& ctx, CallBuffers& buffers, const VarShapeBatchView& batch) {
  DeviceBatch out;
  out.count = batch.count;
  int64_t total = 0;
  for (int64_t i = 0; i < batch.count; ++i) {
    const ImageView& v = batch[i];
    if (v.pixel_size() * static_cast<size_t>(v.width) > static_cast<size_t>(INT32_MAX)) {
      return invalid_argument("opencl: image row too large");
    }
    out.host_descs.push_back(image_desc_packed(v, total));
    total += static_cast<int64_t>((v.packed_bytes() + 63) / 64 * 64);
    out.max_width = std::max(out.max_width, v.width);
    out.max_height = std::max(out.max_height, v.height);
  }
  KILN_TRY_ASSIGN(out.pixels, buffers.acquire(static_cast<size_t>(std::max<int64_t>(total, 64)), "image batch"));
  KILN_TRY_ASSIGN(out.descs, buffer_upload(ctx, buffers, out.host_descs.data(),
                                           sizeof(KilnImageDesc) * out.host_descs.size(), "image descriptors"));
  return out;
}

// One image's rectangle copy between host memory (its strides) and its packed place in the device buffer.
struct RectCopy {
  size_t origin[3] = {0, 0, 0};
  size_t region[3] = {0, 0, 0};
  size_t device_row = 0, device_slice = 0, host_row = 0, host_slice = 0;
};

RectCopy rect_copy(const ImageView& v, const KilnImageDesc& d) {
  RectCopy r;
  r.origin[0] = static_cast<size_t>(d.offset);
  r.region[0] = v.pixel_size() * static_cast<size_t>(v.width);
  r.region[1] = static_cast<size_t>(v.height);
  r.region[2] = v.layout == Layout::kCHW ? static_cast<size_t>(v.channels) : 1;
  r.device_row = static_cast<size_t>(d.row_stride);
  r.device_slice = v.layout == Layout::kCHW ? static_cast<size_t>(d.plane_stride) : r.device_row * r.region[1];
  r.host_row = static_cast<size_t>(v.row_stride);
  r.host_slice = v.layout == Layout::kCHW ? static_cast<size_t>(v.plane_stride) : r.host_row * r.region[1];
  return r;
}

}  // namespace

Result<cl_kernel> OpContext::kernel(const char* program_name, const char* source, const char* kernel_name) {
  if (auto it = kernels.kernels.find(kernel_name); it != kernels.kernels.end()) return it->second.get();
  KILN_TRY_ASSIGN(cl_program program, program_get(runtime, program_name, source));
  return kernel(program, kernel_name);
}

Result<cl_kernel> OpContext::kernel(cl_program program, const char* kernel_name) {
  if (auto it = kernels.kernels.find(kernel_name); it != kernels.kernels.end()) return it->second.get();
  cl_int err = CL_SUCCESS;
  ClHandle<cl_kernel> created(clCreateKernel(program, kernel_name, &err));
  if (err != CL_SUCCESS) return opencl_status(err, std::string("clCreateKernel(") + kernel_name + ")");
  cl_kernel k = created.get();
  kernels.kernels.emplace(kernel_name, std::move(created));
  return k;
}

Result<cl_mem> buffer_upload(OpContext& ctx, CallBuffers& buffers, const void* data, size_t bytes, const char* what) {
  KILN_TRY_ASSIGN(cl_mem mem, buffers.acquire(std::max<size_t>(bytes, 16), what));
  if (bytes > 0) {
    // From a copy kept until the call ends (the caller's is often a temporary), not waited for: a blocking write
    // would wait for every command queued before it, a call's tables one after the other.
    KILN_CL_CHECK(clEnqueueWriteBuffer(ctx.queue, mem, CL_FALSE, 0, bytes, buffers.host_keep(data, bytes), 0, nullptr,
                                       nullptr));
  }
  return mem;
}

Result<DeviceBatch> batch_upload(OpContext& ctx, CallBuffers& buffers, const VarShapeBatchView& in) {
  KILN_TRY_ASSIGN(DeviceBatch batch, batch_describe(ctx, buffers, in));
  for (int64_t i = 0; i < in.count; ++i) {
    const RectCopy r = rect_copy(in[i], batch.host_descs[static_cast<size_t>(i)]);
    const size_t host_origin[3] = {0, 0, 0};
    buffers.set_pending(true);
    KILN_CL_CHECK(clEnqueueWriteBufferRect(ctx.queue, batch.pixels, CL_FALSE, r.origin, host_origin, r.region,
                                           r.device_row, r.device_slice, r.host_row, r.host_slice, in[i].data, 0,
                                           nullptr, nullptr));
  }
  return batch;
}

Result<DeviceBatch> batch_alloc(OpContext& ctx, CallBuffers& buffers, const VarShapeBatchView& out) {
  return batch_describe(ctx, buffers, out);
}

Status batch_download(OpContext& ctx, const DeviceBatch& batch, const VarShapeBatchView& out) {
  for (int64_t i = 0; i < out.count; ++i) {
    const RectCopy r = rect_copy(out[i], batch.host_descs[static_cast<size_t>(i)]);
    const size_t host_origin[3] = {0, 0, 0};
    KILN_CL_CHECK(clEnqueueReadBufferRect(ctx.queue, batch.pixels, CL_FALSE, r.origin, host_origin, r.region,
                                          r.device_row, r.device_slice, r.host_row, r.host_slice, out[i].data, 0,
                                          nullptr, nullptr));
  }
  KILN_CL_CHECK(clFinish(ctx.queue));
  return Status::ok();
}

Status launch_3d(OpContext& ctx, cl_kernel kernel, size_t x, size_t y, size_t images) {
  if (fault_should_fail(FaultSite::kLaunch)) {
    return Status(Errc::kDeviceError, "opencl: injected kernel launch failure (KILN_FAULT)");
  }
  if (x == 0 || y == 0 || images == 0) return Status::ok();
  const size_t local[3] = {16, 8, 1};
  const size_t global[3] = {(x + 15) / 16 * 16, (y + 7) / 8 * 8, images};
  KILN_CL_CHECK(clEnqueueNDRangeKernel(ctx.queue, kernel, 3, nullptr, global, local, 0, nullptr, nullptr));
  return Status::ok();
}

namespace {

constexpr OpenclOp kOpenclOps[] = {
    {OpKind::kRender, render_opencl_supports, render_opencl},
    {OpKind::kResize, resize_opencl_supports, resize_opencl},
    {OpKind::kColor, color_opencl_supports, color_opencl},
    {OpKind::kPreprocess, preprocess_opencl_supports, preprocess_opencl},
    {OpKind::kNormalize, normalize_opencl_supports, normalize_opencl},
    {OpKind::kQuality, quality_opencl_supports, quality_opencl},
    {OpKind::kEnhance, enhance_opencl_supports, enhance_opencl},
    {OpKind::kWarp, warp_opencl_supports, warp_opencl},
    {OpKind::kMask, mask_opencl_supports, mask_opencl},
    {OpKind::kMatte, matte_opencl_supports, matte_opencl},
    {OpKind::kProbability, probability_opencl_supports, probability_opencl},
    {OpKind::kBlur, blur_opencl_supports, blur_opencl},
};
static_assert(op_table_unique(kOpenclOps));

}  // namespace

const OpenclOp* opencl_op_find(OpKind op) { return op_table_find(kOpenclOps, op); }

}  // namespace kiln::opencl
