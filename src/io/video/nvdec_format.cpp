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
  if (choice->cuda_chosen) choice->cuda_withdrawn = true;
  if (choice->insist) return AV_PIX_FMT_NONE;
  for (const AVPixelFormat* f = formats; *f != AV_PIX_FMT_NONE; ++f) {
    const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(*f);
    if (d != nullptr && (d->flags & AV_PIX_FMT_FLAG_HWACCEL) == 0) return *f;
  }
  return AV_PIX_FMT_NONE;
}

}  // namespace kiln
