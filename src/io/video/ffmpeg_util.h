// Small helpers shared by the FFmpeg reader and writer: error text, FFmpeg's own messages of a call, owning handles
// for FFmpeg's objects, and the CUDA device NVDEC and NVENC run on.
#pragma once

#include <memory>
#include <string>

#include "kiln/status.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
}

namespace kiln {

// FFmpeg's message for an AVERROR code ("Invalid data found when processing input").
std::string av_error_text(int code);

struct AvPacketFree {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct AvFrameFree {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct AvCodecContextFree {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct SwsContextFree {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};
struct AvInputClose {
  void operator()(AVFormatContext* f) const { avformat_close_input(&f); }
};
using AvPacketPtr = std::unique_ptr<AVPacket, AvPacketFree>;
using AvFramePtr = std::unique_ptr<AVFrame, AvFrameFree>;
using AvCodecContextPtr = std::unique_ptr<AVCodecContext, AvCodecContextFree>;
using SwsContextPtr = std::unique_ptr<SwsContext, SwsContextFree>;
struct AvBufferUnref {
  void operator()(AVBufferRef* b) const { av_buffer_unref(&b); }
};
using AvInputPtr = std::unique_ptr<AVFormatContext, AvInputClose>;
using AvBufferPtr = std::unique_ptr<AVBufferRef, AvBufferUnref>;

// FFmpeg logs to stderr by default; kiln reports errors itself, so only fatal messages are printed.
void av_log_quiet();

// While alive, FFmpeg's error messages logged on this thread are kept: the reason behind a bare "Generic error in
// an external library" from a hardware codec ("OpenEncodeSessionEx failed: unsupported device").
class AvLogCapture {
 public:
  AvLogCapture();
  ~AvLogCapture();
  AvLogCapture(const AvLogCapture&) = delete;
  AvLogCapture& operator=(const AvLogCapture&) = delete;
  // The kept messages, "; "-separated; `fallback` when there were none.
  std::string text(const std::string& fallback) const;
  void add(std::string line);

 private:
  std::string m_text;
  AvLogCapture* m_outer = nullptr;
};

// swscale's matrix (SWS_CS_*) for an FFmpeg colour space (AVColorSpace; BT.601 for the unspecified and the unknown).
int sws_colorspace(int32_t space);

// CUDA device `index` for FFmpeg's hardware codecs, in the primary context the CUDA runtime (kiln's kernels, ONNX
// Runtime) uses too, instead of a context of its own (its scheduling set to blocking sync, which FFmpeg insists on,
// even when the runtime made it active first); the reason when there is none.
Result<AvBufferPtr> cuda_hw_device_open(int32_t index);

}  // namespace kiln
