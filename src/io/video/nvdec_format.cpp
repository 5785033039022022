#include "io/video/nvdec_format.h"

extern "C" {
#include <libavutil/pixdesc.h>
}

namespace kiln {

AVPixelFormat pick_cuda_format(AVCodecContext* codec, const AVPixelFormat* formats) {
  auto* choice = static_cast<HwFormatChoice*>(codec->opaque);
  for (const AVPixelFormat* f = formats; *f != AV_PIX_FMT_NONE; ++f) {
    if (*f == AV_PIX_FMT_CUDA) {
      choice->cuda_chosen = true;
      return *f;
    }
  }
  // Without CUDA in the list (FFmpeg offers it only for the formats its hwaccel takes: 8-bit 4:2:0 H.264, say) or
  // asked again without it, NVDEC could not start.
  if (choice->cuda_chosen || choice->insist) choice->cuda_withdrawn = true;
  if (choice->insist) return AV_PIX_FMT_NONE;
  for (const AVPixelFormat* f = formats; *f != AV_PIX_FMT_NONE; ++f) {
    const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(*f);
    if (d != nullptr && (d->flags & AV_PIX_FMT_FLAG_HWACCEL) == 0) return *f;
  }
  return AV_PIX_FMT_NONE;
}

std::string nvdec_setup(AVCodecContext* codec, bool insist, int32_t cuda_device, int32_t extra_frames,
                        HwFormatChoice* choice, AvBufferPtr* device) {
  const AVCodec* decoder = codec->codec ? codec->codec : avcodec_find_decoder(codec->codec_id);
  bool offers_cuda = false;
  for (int i = 0; decoder != nullptr; ++i) {
    const AVCodecHWConfig* config = avcodec_get_hw_config(decoder, i);
    if (config == nullptr) break;
    if (config->device_type == AV_HWDEVICE_TYPE_CUDA &&
        (config->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) != 0) {
      offers_cuda = true;
    }
  }
  if (!offers_cuda) {
    return "software decode: this FFmpeg build has no CUDA hwaccel for " +
           std::string(avcodec_get_name(codec->codec_id));
  }
  auto opened = cuda_hw_device_open(cuda_device);
  if (!opened.is_ok()) return "software decode: NVDEC: " + opened.status().message();
  codec->hw_device_ctx = av_buffer_ref(opened.value().get());
  if (codec->hw_device_ctx == nullptr) return "software decode: out of memory setting up NVDEC";
  *device = std::move(opened).value();
  choice->insist = insist;
  codec->opaque = choice;
  codec->get_format = pick_cuda_format;
  if (extra_frames > 0) codec->extra_hw_frames = extra_frames;
  return "";
}

}  // namespace kiln
