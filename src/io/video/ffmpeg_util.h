// Small helpers shared by the FFmpeg reader and writer: error text, and owning handles for FFmpeg's objects.
#pragma once

#include <memory>
#include <string>

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
using AvInputPtr = std::unique_ptr<AVFormatContext, AvInputClose>;

// FFmpeg logs to stderr by default; kiln reports errors itself, so only fatal messages are printed.
void av_log_quiet();

}  // namespace kiln
