// NVDEC's decoded pictures kept in device memory (VideoReaderOptions::device_frames): the reader hands out a
// reference to FFmpeg's CUDA frame instead of copying it to the host, and the consumer converts it on the device
// (kiln's color op, ColorConversion::kNv12ToRgb) where its next kernels and the model read it.
#pragma once

#include <string>

#include "io/video/video_reader.h"

struct AVFrame;

namespace kiln {

// Wraps `cuda_frame` (AV_PIX_FMT_CUDA) as a DeviceVideoFrame holding its own reference, once the decoder's writes to
// it have ended (its stream is waited for); the reason it cannot be (not NV12, planes that do not share one pitch,
// an odd width, a build without CUDA) as the error.
Result<std::shared_ptr<const DeviceVideoFrame>> device_frame_wrap(const AVFrame* cuda_frame, int32_t cuda_device);

// The YUV matrix of FFmpeg's AVColorSpace, as the software path's colour conversion reads it (unspecified: BT.601).
YuvMatrix yuv_matrix_of(int32_t av_colorspace);
// Whether yuv_matrix_of() is the matrix swscale uses for that colour space (sws_colorspace): not for FCC and
// SMPTE 240M, which kiln's conversions do not have.
bool yuv_matrix_is_swscales(int32_t av_colorspace);

}  // namespace kiln
