// The decoder's choice of NVDEC: FFmpeg starts NVDEC only while it decodes the first packet, and when that fails it
// calls get_format again without the CUDA format, so only what get_format saw says whether frames come from the GPU.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
}

namespace kiln {

struct HwFormatChoice {
  bool insist = false;        // --hw-decode cuda: no software decode after NVDEC failed to start
  bool cuda_chosen = false;
  bool cuda_withdrawn = false;  // asked again without CUDA after choosing it: NVDEC could not start
};

// The decoder's get_format (codec->opaque is its HwFormatChoice): the CUDA surface format when FFmpeg offers it, else
// its first software choice (none when the choice insists on CUDA).
AVPixelFormat pick_cuda_format(AVCodecContext* codec, const AVPixelFormat* formats);

}  // namespace kiln
