#include "io/video/cuda_encoder_frames.h"

#include <string>

extern "C" {
#include <libavutil/hwcontext.h>
}

namespace kiln {

namespace {

Status frame_error(const std::string& what, int rc) {
  return Status(Errc::kDeviceError, "NVENC's device frames: " + what + ": " + av_error_text(rc));
}

Result<AvFramePtr> pool_frame(AVBufferRef* frames) {
  AvFramePtr frame(av_frame_alloc());
  if (!frame) return Status(Errc::kOutOfMemory, "NVENC's device frames: cannot allocate a frame");
  if (int rc = av_hwframe_get_buffer(frames, frame.get(), 0); rc < 0) return frame_error("no frame from the pool", rc);
  return frame;
}

}  // namespace

Result<CudaEncoderFrames> CudaEncoderFrames::make(AVBufferRef* device, int32_t width, int32_t height) {
  if (width % 2 != 0 || height % 2 != 0) {
    return Status(Errc::kNotImplemented, "NVENC's device frames are NV12: the size must be even");
  }
  AvBufferPtr frames(av_hwframe_ctx_alloc(device));
  if (!frames) return Status(Errc::kOutOfMemory, "NVENC's device frames: cannot allocate a frames context");
  auto* context = reinterpret_cast<AVHWFramesContext*>(frames->data);
  context->format = AV_PIX_FMT_CUDA;
  context->sw_format = AV_PIX_FMT_NV12;
  context->width = width;
  context->height = height;
  if (int rc = av_hwframe_ctx_init(frames.get()); rc < 0) return frame_error("cannot make the frame pool", rc);
  CudaEncoderFrames out;
  out.m_frames = std::move(frames);
  out.m_width = width;
  out.m_height = height;
  return out;
}

Result<VideoDeviceFrame> CudaEncoderFrames::next() {
  if (!m_next) {
    KILN_TRY_ASSIGN(m_next, pool_frame(m_frames.get()));
  }
  const AVFrame& f = *m_next;
  // FFmpeg's CUDA pool lays NV12 out as one block; kiln's kernels address both planes through one view.
  if (f.linesize[1] != f.linesize[0] || f.data[1] != f.data[0] + static_cast<ptrdiff_t>(f.linesize[0]) * m_height) {
    return Status(Errc::kNotImplemented, "NVENC's device frames: the chroma plane does not follow the luma rows");
  }
  VideoDeviceFrame out;
  const int32_t rows = m_height + m_height / 2;
  out.nv12 = image_view_packed(f.data[0], m_width, rows, 1, PixelType::kU8);
  out.nv12.row_stride = f.linesize[0];
  out.chroma_row = m_height;
  return out;
}

Result<AVFrame*> CudaEncoderFrames::take(int64_t pts) {
  if (!m_next) return invalid_argument("NVENC's device frames: write_device() without device_frame()");
  m_uploaded = std::move(m_next);
  m_uploaded->pts = pts;
  ++m_taken;
  return m_uploaded.get();
}

Result<AVFrame*> CudaEncoderFrames::upload(const AVFrame& host) {
  KILN_TRY_ASSIGN(AvFramePtr frame, pool_frame(m_frames.get()));
  if (int rc = av_hwframe_transfer_data(frame.get(), &host, 0); rc < 0) return frame_error("upload", rc);
  frame->pts = host.pts;
  m_uploaded = std::move(frame);
  return m_uploaded.get();
}

}  // namespace kiln
