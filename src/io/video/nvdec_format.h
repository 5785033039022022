// The decoder's choice of NVDEC: FFmpeg starts NVDEC only while it decodes the first packet, and when that fails it
// calls get_format again without the CUDA format, so only what get_format saw says whether frames come from the GPU.
#pragma once

#include <cstdint>
#include <string>

#include "io/video/ffmpeg_util.h"

extern "C" {
#include <libavcodec/avcodec.h>
}

namespace kiln {

struct HwFormatChoice {
  bool insist = false;        // --hw-decode cuda: no software decode after NVDEC failed to start
  bool cuda_chosen = false;
  bool cuda_withdrawn = false;  // NVDEC could not start: asked again without CUDA after choosing it, or offered none
};

// The decoder's get_format (codec->opaque is its HwFormatChoice): the CUDA surface format when FFmpeg offers it, else
// its first software choice (none when the choice insists on CUDA).
AVPixelFormat pick_cuda_format(AVCodecContext* codec, const AVPixelFormat* formats);

// Sets the decoder `codec` (allocated, not yet opened) up for NVDEC on `cuda_device` (the CUDA backend's), with
// `extra_frames` more surfaces for frames a consumer holds: "" when done (*device holds the hw device; `choice`, which
// must outlive the decoder, is its get_format's), else the reason NVDEC is not used ("software decode: ...").
std::string nvdec_setup(AVCodecContext* codec, bool insist, int32_t cuda_device, int32_t extra_frames,
                        HwFormatChoice* choice, AvBufferPtr* device);

}  // namespace kiln
