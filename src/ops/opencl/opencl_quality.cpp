// Quality on OpenCL: the batch is uploaded once, one work-group per (image, block of rows) writes the block's
// integer sums, and the host adds the blocks of each image (exact: the result equals the CPU's bit for bit).
#include <algorithm>
#include <string>
#include <vector>

#include "core/fault.h"
#include "opencl_quality_source.h"
#include "ops/opencl/opencl_ops.h"
#include "ops/quality.h"

namespace kiln::opencl {

bool quality_opencl_supports(const OpCall& /*call*/, const OpenclDevice& device) {
  size_t max_group = 0;
  if (clGetDeviceInfo(device.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(max_group), &max_group, nullptr) !=
      CL_SUCCESS) {
    return false;
  }
  return max_group >= KILN_QUALITY_GROUP;
}

Status quality_opencl(OpContext& ctx, const OpCall& call) {
  const auto& params = *static_cast<const QualityParams*>(call.params);
  auto* results = static_cast<QualityMetrics*>(call.results);
  if (call.in.count == 0) return Status::ok();
  KILN_TRY_ASSIGN(cl_kernel kernel, ctx.kernel("quality", quality_program::kSource, "quality_sums_kernel"));
  CallBuffers buffers(ctx.pool, ctx.device(), ctx.queue);
  KILN_TRY_ASSIGN(DeviceBatch in, batch_upload(ctx, buffers, call.in));
  const int32_t blocks = (in.max_height + KILN_QUALITY_BLOCK_ROWS - 1) / KILN_QUALITY_BLOCK_ROWS;
  const size_t partial_count = static_cast<size_t>(in.count) * static_cast<size_t>(blocks) * KILN_QUALITY_SUMS;
  KILN_TRY_ASSIGN(cl_mem partial, buffers.acquire(partial_count * sizeof(int64_t), "quality sums"));
  const cl_int bgr = params.bgr ? 1 : 0;
  const cl_int blocks_arg = blocks;
  KILN_CL_CHECK(kernel_args_set(kernel, in.pixels, in.descs, bgr, blocks_arg, partial));
  if (fault_should_fail(FaultSite::kLaunch)) {
    return Status(Errc::kDeviceError, "opencl: injected kernel launch failure (KILN_FAULT)");
  }
  const size_t local[3] = {KILN_QUALITY_GROUP, 1, 1};
  const size_t global[3] = {KILN_QUALITY_GROUP, static_cast<size_t>(blocks), static_cast<size_t>(in.count)};
  buffers.set_pending(true);
  KILN_CL_CHECK(clEnqueueNDRangeKernel(ctx.queue, kernel, 3, nullptr, global, local, 0, nullptr, nullptr));
  std::vector<int64_t> host(partial_count);
  KILN_CL_CHECK(clEnqueueReadBuffer(ctx.queue, partial, CL_TRUE, 0, partial_count * sizeof(int64_t), host.data(), 0,
                                    nullptr, nullptr));
  buffers.set_pending(false);
  for (int64_t i = 0; i < in.count; ++i) {
    KilnQualitySums total{};
    for (int32_t b = 0; b < blocks; ++b) {
      const int64_t* s = host.data() + (static_cast<size_t>(i) * static_cast<size_t>(blocks) + static_cast<size_t>(b)) *
                                           KILN_QUALITY_SUMS;
      quality_sums_add(total, KilnQualitySums{s[0], s[1], s[2], s[3], s[4]});
    }
    const int64_t pixels = static_cast<int64_t>(call.in[i].width) * call.in[i].height;
    results[i] = quality_metrics_from_sums(total, pixels);
  }
  return Status::ok();
}

}  // namespace kiln::opencl
