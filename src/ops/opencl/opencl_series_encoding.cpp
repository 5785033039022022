// Series encodings on OpenCL (the render op's gasf/gadf/mtf/rp styles): the windows prepared on the host
// (ops/series_encoding.h), uploaded as one float32 image, one launch over (columns, rows, windows), one download.
#include "opencl_series_encoding_source.h"
#include "ops/image_desc.h"
#include "ops/opencl/opencl_ops.h"
#include "ops/series_encoding.h"

namespace kiln::opencl {

Status series_encoding_opencl(OpContext& ctx, const OpCall& call) {
  if (call.in.count == 0) return Status::ok();
  const EncodingRows rows = encoding_rows_prepare(call);
  const KilnEncodingParams& p = rows.params;
  KILN_TRY_ASSIGN(cl_kernel kernel,
                  ctx.kernel("series_encoding", series_encoding_program::kSource, "series_encoding_kernel"));
  CallBuffers buffers(ctx.pool, ctx.device(), ctx.queue);
  KILN_TRY_ASSIGN(DeviceBatch in, batch_upload(ctx, buffers, rows.batch()));
  KILN_TRY_ASSIGN(DeviceBatch out, batch_alloc(ctx, buffers, call.out));
  KILN_CL_CHECK(kernel_args_set(kernel, in.pixels, in.descs, out.pixels, out.descs, p));
  buffers.set_pending(true);
  KILN_TRY(launch_3d(ctx, kernel, static_cast<size_t>(out.max_width), static_cast<size_t>(out.max_height),
                     static_cast<size_t>(out.count)));
  KILN_TRY(batch_download(ctx, out, call.out));
  buffers.set_pending(false);
  return Status::ok();
}

}  // namespace kiln::opencl
