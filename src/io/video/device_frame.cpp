#include "io/video/device_frame.h"

#include <dlfcn.h>

#include "io/video/ffmpeg_util.h"

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
#if KILN_VIDEO_CUDA
#include <libavutil/hwcontext_cuda.h>
#endif
}

namespace kiln {

namespace {

#if KILN_VIDEO_CUDA
// The driver API calls the wait needs, from the libcuda that NVDEC already loaded (nothing is linked against it).
struct DriverCalls {
  CUresult (*push)(CUcontext) = nullptr;
  CUresult (*pop)(CUcontext*) = nullptr;
  CUresult (*synchronize)(CUstream) = nullptr;
};

const DriverCalls* driver_calls() {
  static const DriverCalls calls = [] {
    DriverCalls c;
    void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (cuda == nullptr) return c;
    c.push = reinterpret_cast<CUresult (*)(CUcontext)>(dlsym(cuda, "cuCtxPushCurrent_v2"));
    c.pop = reinterpret_cast<CUresult (*)(CUcontext*)>(dlsym(cuda, "cuCtxPopCurrent_v2"));
    c.synchronize = reinterpret_cast<CUresult (*)(CUstream)>(dlsym(cuda, "cuStreamSynchronize"));
    return c;
  }();
  return calls.push != nullptr && calls.pop != nullptr && calls.synchronize != nullptr ? &calls : nullptr;
}

// FFmpeg queues a frame's last writes (NVDEC's post-processing into the surface, or its copy) on the device
// context's stream and does not wait for them: kiln's non-blocking streams would not either, so the frame is waited
// for here, as av_hwframe_transfer_data does for the host path.
Status decoded_wait(const AVHWFramesContext* frames) {
  const auto* device = static_cast<const AVCUDADeviceContext*>(frames->device_ctx->hwctx);
  const DriverCalls* calls = driver_calls();
  if (calls == nullptr) return Status(Errc::kDeviceError, "libcuda's stream calls are not loaded");
  if (calls->push(device->cuda_ctx) != CUDA_SUCCESS) return Status(Errc::kDeviceError, "cannot enter NVDEC's context");
  const CUresult waited = calls->synchronize(device->stream);
  CUcontext popped = nullptr;
  calls->pop(&popped);
  if (waited != CUDA_SUCCESS) {
    return Status(Errc::kDeviceError, "waiting for a decoded frame failed (CUDA error " + std::to_string(waited) + ")");
  }
  return Status::ok();
}
#endif

}  // namespace

YuvMatrix yuv_matrix_of(int32_t av_colorspace) {
  switch (av_colorspace) {
    case AVCOL_SPC_BT709: return YuvMatrix::kBt709;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return YuvMatrix::kBt2020;
    default: return YuvMatrix::kBt601;  // swscale's default (SWS_CS_DEFAULT), as the software path
  }
}

bool yuv_matrix_is_swscales(int32_t av_colorspace) {
  switch (sws_colorspace(av_colorspace)) {
    case SWS_CS_ITU709: return yuv_matrix_of(av_colorspace) == YuvMatrix::kBt709;
    case SWS_CS_BT2020: return yuv_matrix_of(av_colorspace) == YuvMatrix::kBt2020;
    case SWS_CS_DEFAULT: return yuv_matrix_of(av_colorspace) == YuvMatrix::kBt601;
    default: return false;
  }
}

Result<std::shared_ptr<const DeviceVideoFrame>> device_frame_wrap(const AVFrame* cuda_frame, int32_t cuda_device) {
  if (cuda_frame->hw_frames_ctx == nullptr) return invalid_argument("the frame has no device frames context");
  const auto* frames = reinterpret_cast<const AVHWFramesContext*>(cuda_frame->hw_frames_ctx->data);
  if (frames->sw_format != AV_PIX_FMT_NV12) {
    const char* name = av_get_pix_fmt_name(frames->sw_format);
    return Status(Errc::kUnsupportedFormat,
                  std::string("the decoder's surfaces are ") + (name != nullptr ? name : "?") + ", not nv12");
  }
  const int64_t pitch = cuda_frame->linesize[0];
  const int64_t chroma_bytes = cuda_frame->data[1] - cuda_frame->data[0];
  if (pitch <= 0 || cuda_frame->linesize[1] != pitch || chroma_bytes <= 0 || chroma_bytes % pitch != 0) {
    return Status(Errc::kUnsupportedFormat, "the surface's chroma plane is not rows of its luma plane's pitch");
  }
  if (cuda_frame->width % 2 != 0) return Status(Errc::kUnsupportedFormat, "the picture's width is odd");
#if KILN_VIDEO_CUDA
  KILN_TRY(decoded_wait(frames));
#else
  return Status(Errc::kNotImplemented, "kiln was built without CUDA");
#endif
  AVFrame* held = av_frame_clone(cuda_frame);
  if (held == nullptr) return Status(Errc::kOutOfMemory, "cannot reference a decoded frame");
  auto frame = std::make_shared<DeviceVideoFrame>();
  frame->hold = std::shared_ptr<void>(held, [](void* f) {
    auto* p = static_cast<AVFrame*>(f);
    av_frame_free(&p);
  });
  frame->cuda_device = cuda_device;
  frame->planes = held->data[0];
  frame->pitch = pitch;
  frame->chroma_row = static_cast<int32_t>(chroma_bytes / pitch);
  frame->width = held->width;
  frame->height = held->height;
  frame->matrix = yuv_matrix_of(held->colorspace);
  frame->full_range = held->color_range == AVCOL_RANGE_JPEG;
  return std::shared_ptr<const DeviceVideoFrame>(std::move(frame));
}

}  // namespace kiln
