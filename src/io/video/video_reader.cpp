#include "io/video/video_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <filesystem>
#include <string_view>

#include "core/fault.h"
#include "io/video/capture_devices.h"
#include "io/video/device_frame.h"
#include "io/video/display_rotation.h"
#include "io/video/ffmpeg_util.h"
#include "io/video/nvdec_format.h"
#include "io/video/packet_replay.h"
#include "kiln/device.h"

extern "C" {
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
}

namespace kiln {

namespace {

constexpr size_t kMaxKeptErrors = 20;
// FFmpeg adds held frames to NVDEC's surfaces, of which the decoder takes at most 32 (a stream's own references take
// up to 16 + 2 + 3).
constexpr int32_t kMaxDeviceFramesHeld = 8;
constexpr int kMaxReadFailures = 64;

class FfmpegVideoReader final : public VideoReader {
 public:
  Status open(const std::string& path, const VideoReaderOptions& options) {
    av_log_quiet();
    m_info.path = path;
    m_options = options;
    const AVInputFormat* input_format = nullptr;
    if (video_is_capture_device(path)) {
      KILN_TRY(capture_devices_register());
      input_format = av_find_input_format("video4linux2");
    } else if (!std::filesystem::exists(path)) {
      return io_error(path + ": no such file");
    }
    AVFormatContext* raw = nullptr;
    if (int rc = avformat_open_input(&raw, path.c_str(), input_format, nullptr); rc < 0) {
      const std::string why = path + ": cannot open as a video: " + av_error_text(rc);
      return input_format != nullptr ? io_error(why) : unsupported_format(why);  // a device may be busy or absent
    }
    m_format.reset(raw);
    if (int rc = avformat_find_stream_info(m_format.get(), nullptr); rc < 0) {
      return unsupported_format(path + ": cannot read the stream layout: " + av_error_text(rc));
    }
    const AVCodec* decoder = nullptr;
    m_stream = av_find_best_stream(m_format.get(), AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    if (m_stream == AVERROR_DECODER_NOT_FOUND) {
      const int any = av_find_best_stream(m_format.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
      const char* codec = any >= 0 ? avcodec_get_name(m_format->streams[any]->codecpar->codec_id) : "?";
      return unsupported_format(path + ": this FFmpeg build has no decoder for codec " + codec);
    }
    if (m_stream < 0) return unsupported_format(path + ": no video stream (" + m_format->iformat->name + ")");
    AVStream* stream = m_format->streams[m_stream];
    for (unsigned i = 0; i < m_format->nb_streams; ++i) {
      if (m_format->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) ++m_info.audio_streams;
    }

    m_codec.reset(avcodec_alloc_context3(decoder));
    if (!m_codec) return Status(Errc::kOutOfMemory, path + ": cannot allocate a decoder");
    if (int rc = avcodec_parameters_to_context(m_codec.get(), stream->codecpar); rc < 0) {
      return unsupported_format(path + ": bad codec parameters: " + av_error_text(rc));
    }
    const int64_t pixels = static_cast<int64_t>(stream->codecpar->width) * stream->codecpar->height;
    if (pixels > kImageMaxPixels) {
      return unsupported_format(path + ": " + std::to_string(stream->codecpar->width) + "x" +
                                std::to_string(stream->codecpar->height) + " frames are over the " +
                                std::to_string(kImageMaxPixels) + "-pixel limit");
    }
    decoder_configure(m_codec.get());
    const bool refusal_injected =
        options.hw_decode == VideoHwDecode::kAuto && fault_should_fail(FaultSite::kNvdecRefused);
    const int32_t extra_frames = options.device_frames ? std::clamp(options.device_frames_held, 0, kMaxDeviceFramesHeld)
                                                       : 0;
    std::string hw_note = refusal_injected ? "software decode: NVDEC refused (KILN_FAULT)"
                          : options.hw_decode == VideoHwDecode::kNone
                              ? ""
                              : nvdec_setup(m_codec.get(), options.hw_decode == VideoHwDecode::kCuda,
                                            options.cuda_device, extra_frames, &m_hw_choice, &m_hw_device);
    if (options.hw_decode == VideoHwDecode::kCuda && !m_hw_device) {
      return unsupported_format(path + ": hardware decode (cuda) asked for, but " + hw_note);
    }
    if (m_hw_device || refusal_injected) {
      // Every frame thread adds decode surfaces, and NVDEC fails beyond 32 of them; the GPU needs no CPU threads.
      m_codec->thread_count = 1;
      m_codec->thread_type = FF_THREAD_SLICE;
      // For a start over on every thread, should NVDEC not start (software_restart; cuda stops instead).
      if (options.hw_decode == VideoHwDecode::kAuto) m_replay.keep_start();
    }
    if (int rc = avcodec_open2(m_codec.get(), decoder, nullptr); rc < 0) {
      return unsupported_format(path + ": cannot open the " + decoder->name + " decoder: " + av_error_text(rc));
    }

    m_info.container = m_format->iformat->name;
    m_info.codec = avcodec_get_name(stream->codecpar->codec_id);
    m_info.colour = {stream->codecpar->color_space, stream->codecpar->color_range, stream->codecpar->color_primaries,
                     stream->codecpar->color_trc};
    // Frames come out turned as the display matrix asks (phones record sideways): the size is the picture's.
    m_turn = display_rotation_clockwise(stream);
    const bool quarter = m_turn == 90 || m_turn == 270;
    m_info.width = quarter ? stream->codecpar->height : stream->codecpar->width;
    m_info.height = quarter ? stream->codecpar->width : stream->codecpar->height;
    m_info.time_base = {stream->time_base.num, stream->time_base.den};
    AVRational rate = stream->avg_frame_rate.num > 0 ? stream->avg_frame_rate : stream->r_frame_rate;
    m_info.frame_rate = {rate.num, rate.den > 0 ? rate.den : 1};
    if (stream->duration != AV_NOPTS_VALUE) {
      m_info.duration_s = static_cast<double>(stream->duration) * av_q2d(stream->time_base);
    } else if (m_format->duration != AV_NOPTS_VALUE) {
      m_info.duration_s = static_cast<double>(m_format->duration) / AV_TIME_BASE;
    }
    m_info.frames = stream->nb_frames > 0 ? stream->nb_frames
                                          : static_cast<int64_t>(m_info.duration_s * m_info.frame_rate.value() + 0.5);
    m_info.frames_estimated = stream->nb_frames <= 0 && m_info.frames > 0;
    m_start_pts = stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0;
    decode_line_set(m_hw_device ? "cuda (NVDEC)"
                                : "software (" + std::to_string(m_codec->thread_count) + " threads)" +
                                      (hw_note.empty() ? "" : "; " + hw_note));
    m_packet.reset(av_packet_alloc());
    m_frame.reset(av_frame_alloc());
    m_sw_frame.reset(av_frame_alloc());
    if (!m_packet || !m_frame || !m_sw_frame) return Status(Errc::kOutOfMemory, path + ": cannot allocate frames");
    return Status::ok();
  }

  const VideoInfo& info() const override { return m_info; }
  const std::vector<std::string>& errors() const override { return m_errors; }
  int64_t error_count() const override { return m_error_count; }

  Status read(VideoFrame* out, bool* end) override {
    *end = false;
    for (;;) {
      if (m_hw_choice.insist && m_hw_choice.cuda_withdrawn) {  // set by get_format inside FFmpeg's decode calls
        keeping_end();
        return Status(Errc::kDeviceError, m_info.path + ": hardware decode (cuda) asked for, but NVDEC could not "
                                          "start for this " + avcodec_get_name(m_codec->codec_id) + " stream");
      }
      const int rc = avcodec_receive_frame(m_codec.get(), m_frame.get());
      if (rc == 0) {
        if (m_next_index == 0 && m_replay.keeping()) {
          if (m_frame->format != AV_PIX_FMT_CUDA && software_restart()) continue;  // this frame is decoded again
          keeping_end();
        }
        if (m_next_index == 0) hw_outcome_note();
        Status st = convert(out);
        av_frame_unref(m_frame.get());
        return st;
      }
      if (rc == AVERROR_EOF) {
        keeping_end();
        end_check();
        *end = true;
        return Status::ok();
      }
      if (rc != AVERROR(EAGAIN)) {
        decoder_error_note("decoding: " + av_error_text(rc));
        if (m_flushed) {
          keeping_end();
          *end = true;
          return Status::ok();
        }
      }
      if (m_flushed) {
        keeping_end();
        end_check();
        *end = true;
        return Status::ok();
      }
      feed();
    }
  }

  Status device_frames_end(VideoFrame* frame, const std::string& why) override {
    if (m_options.device_frames && !m_device_frames_off) m_info.decode += "; frames to the host: " + why;
    m_device_frames_off = true;
    if (frame->device == nullptr) return Status::ok();
    const std::shared_ptr<const DeviceVideoFrame> device = std::move(frame->device);
    frame->device.reset();
    return to_rgb(static_cast<AVFrame*>(device->hold.get()), frame);
  }

 private:
  // Sends the next packet of the video stream, or the end-of-stream flush after the last one (or after a read
  // error: what was read so far is still decoded). A packet the decoder cannot take yet is sent again first.
  void feed() {
    if (m_packet_held && packet_send()) return;
    for (;;) {
      if (m_replay.next(m_packet.get())) {
        ++m_packets;
        if (packet_send()) return;
        continue;
      }
      if (m_flush_after_replay) {  // the input had ended before the decoder was replaced
        m_flush_after_replay = false;
        avcodec_send_packet(m_codec.get(), nullptr);
        m_flushed = true;
        return;
      }
      const int rc = av_read_frame(m_format.get(), m_packet.get());
      if (rc < 0) {
        // Demuxers resynchronise after damaged data (Matroska finds its next cluster): a read error is retried
        // until the end of the file or a run of failures that makes no progress.
        const bool at_end = rc == AVERROR_EOF || (m_format->pb != nullptr && avio_feof(m_format->pb));
        if (!at_end) note_error("reading: " + av_error_text(rc));
        if (!at_end && ++m_read_failures < kMaxReadFailures) continue;
        avcodec_send_packet(m_codec.get(), nullptr);
        m_flushed = true;
        return;
      }
      m_read_failures = 0;
      if (m_packet->stream_index != m_stream) {
        av_packet_unref(m_packet.get());
        continue;
      }
      ++m_packets;
      m_replay.keep(m_packet.get());
      if (packet_send()) return;
    }
  }

  // The decoder's settings from the reader's options (its threads, low delay), before it is opened.
  void decoder_configure(AVCodecContext* codec) const {
    codec->max_pixels = kImageMaxPixels;  // also for a size that changes mid-stream
    codec->pkt_timebase = m_format->streams[m_stream]->time_base;
    codec->thread_count = m_options.threads;
    codec->thread_type = m_options.low_latency ? FF_THREAD_SLICE : (FF_THREAD_FRAME | FF_THREAD_SLICE);
    if (m_options.low_latency) codec->flags |= AV_CODEC_FLAG_LOW_DELAY;
  }

  // NVDEC could not start for this stream, and FFmpeg went on in software on NVDEC's single thread: a software
  // decoder with the reader's threads takes its place and is sent the stream's packets again from the first. False
  // (the single thread goes on) when not every packet was kept or the new decoder does not open.
  bool software_restart() {
    if (!m_replay.complete() || m_options.threads == 1) return false;
    AvCodecContextPtr codec(avcodec_alloc_context3(m_codec->codec));
    if (!codec || avcodec_parameters_to_context(codec.get(), m_format->streams[m_stream]->codecpar) < 0) return false;
    decoder_configure(codec.get());
    if (avcodec_open2(codec.get(), m_codec->codec, nullptr) < 0) return false;
    av_frame_unref(m_frame.get());
    m_codec = std::move(codec);
    m_hw_device.reset();
    m_replay.replay_start();
    if (m_packet_held) av_packet_unref(m_packet.get());  // kept, so sent again in its turn
    m_packet_held = false;
    m_flush_after_replay = m_flushed;
    m_flushed = false;
    m_packets = 0;
    m_kept_errors.clear();  // the new decoder finds the same damage in the same packets
    decode_line_set("software (" + std::to_string(m_codec->thread_count) + " threads); " + nvdec_refusal());
    return true;
  }

  // Sends m_packet. A decoder that is full (EAGAIN: its frames must be taken first) keeps it held for the next
  // feed(); otherwise it is let go, a refused one noted as damage. False when the caller should read another.
  bool packet_send() {
    const int sent = fault_should_fail(FaultSite::kDecoderFull) ? AVERROR(EAGAIN)
                                                                 : avcodec_send_packet(m_codec.get(), m_packet.get());
    if (sent == AVERROR(EAGAIN)) {
      m_packet_held = true;
      return true;
    }
    m_packet_held = false;
    av_packet_unref(m_packet.get());
    if (sent < 0) {
      decoder_error_note("packet " + std::to_string(m_packets - 1) + ": " + av_error_text(sent));
      return false;
    }
    return true;
  }

  Status convert(VideoFrame* out) {
    AVFrame* src = m_frame.get();
    out->device.reset();
    if (src->format == AV_PIX_FMT_CUDA && device_frame_keep(src, out)) return timestamps_set(src, out);
    KILN_TRY(to_rgb(src, out));
    return timestamps_set(src, out);
  }

  // The decoded picture `src` (on the host, or a CUDA frame copied down first) as out->rgb: scaled, turned.
  Status to_rgb(AVFrame* src, VideoFrame* out) {
    if (src->format == AV_PIX_FMT_CUDA) {
      av_frame_unref(m_sw_frame.get());
      if (int rc = av_hwframe_transfer_data(m_sw_frame.get(), src, 0); rc < 0) {
        return Status(Errc::kDeviceError, m_info.path + ": copying a decoded frame from the GPU: " + av_error_text(rc));
      }
      // The transfer copies pixels only: colour space, range, timestamps and damage flags come from the frame.
      if (int rc = av_frame_copy_props(m_sw_frame.get(), src); rc < 0) {
        return Status(Errc::kOutOfMemory, m_info.path + ": copying a decoded frame's properties: " + av_error_text(rc));
      }
      src = m_sw_frame.get();
    }
    const bool quarter = m_turn == 90 || m_turn == 270;
    if (m_info.width <= 0 || m_info.height <= 0) {
      m_info.width = quarter ? src->height : src->width;
      m_info.height = quarter ? src->width : src->height;
    }
    const auto [shown_width, shown_height] = output_size();
    // Scaled in the coded orientation, then turned.
    const int32_t out_width = quarter ? shown_height : shown_width, out_height = quarter ? shown_width : shown_height;
    m_scaler.reset(sws_getCachedContext(m_scaler.release(), src->width, src->height,
                                        static_cast<AVPixelFormat>(src->format), out_width, out_height,
                                        AV_PIX_FMT_RGB24, SWS_BILINEAR | SWS_ACCURATE_RND, nullptr, nullptr, nullptr));
    if (!m_scaler) {
      const char* name = av_get_pix_fmt_name(static_cast<AVPixelFormat>(src->format));
      return unsupported_format(m_info.path + ": cannot convert pixel format " + (name ? name : "?") + " to RGB");
    }
    const int colorspace = sws_colorspace(src->colorspace);
    const int full_range = src->color_range == AVCOL_RANGE_JPEG ? 1 : 0;
    int* inv_table = nullptr;
    int* table = nullptr;
    int src_range = 0, dst_range = 0, brightness = 0, contrast = 0, saturation = 0;
    if (sws_getColorspaceDetails(m_scaler.get(), &inv_table, &src_range, &table, &dst_range, &brightness, &contrast,
                                 &saturation) >= 0) {
      sws_setColorspaceDetails(m_scaler.get(), sws_getCoefficients(colorspace), full_range, table, 1, brightness,
                               contrast, saturation);
    }
    ImageBuffer& rgb = m_turn != 0 ? m_coded : out->rgb;
    rgb.width = out_width;
    rgb.height = out_height;
    rgb.channels = 3;
    rgb.pixels.resize(static_cast<size_t>(rgb.width) * static_cast<size_t>(rgb.height) * 3);
    uint8_t* dst[4] = {rgb.pixels.data(), nullptr, nullptr, nullptr};
    int dst_stride[4] = {rgb.width * 3, 0, 0, 0};
    sws_scale(m_scaler.get(), src->data, src->linesize, 0, src->height, dst, dst_stride);
    if (m_turn != 0) rgb_turn(m_coded, m_turn, &out->rgb);
    return Status::ok();
  }

  // device_frames: the CUDA frame handed out as it is, when it can be (else false, the reason noted once).
  bool device_frame_keep(const AVFrame* src, VideoFrame* out) {
    if (!m_options.device_frames || m_device_frames_off) return false;
    if (m_info.width <= 0 || m_info.height <= 0) {
      m_info.width = src->width;
      m_info.height = src->height;
    }
    std::string why;
    if (m_turn != 0) {
      why = "the picture must be turned";
    } else if (src->width != m_info.width || src->height != m_info.height) {
      // Frames on the host are scaled to the stream's first size; a consumer sizes its work by it.
      why = "the picture's size changed to " + std::to_string(src->width) + "x" + std::to_string(src->height);
    }
    if (why.empty()) {
      auto wrapped = device_frame_wrap(src, m_options.cuda_device);
      if (wrapped.is_ok()) {
        out->device = std::move(wrapped).value();
        out->rgb.reset();
        if (!m_device_frames_kept) m_info.decode += "; frames kept on the device (NV12)";
        m_device_frames_kept = true;
        return true;
      }
      why = wrapped.status().message();
    }
    m_device_frames_off = true;
    m_info.decode += "; frames to the host: " + why;
    return false;
  }

  Status timestamps_set(const AVFrame* src, VideoFrame* out) {
    int64_t pts = src->best_effort_timestamp;
    if (pts == AV_NOPTS_VALUE) pts = src->pts;
    if (pts == AV_NOPTS_VALUE) pts = m_last_pts == AV_NOPTS_VALUE ? m_start_pts : m_last_pts + frame_ticks();
    pts += m_pts_shift;
    if (m_last_pts != AV_NOPTS_VALUE && pts <= m_last_pts) {
      const int64_t follow_on = m_last_pts + frame_ticks();
      note_error("frame " + std::to_string(m_next_index) + ": the timestamps go back (" + seconds_text(pts) +
                 " s after " + seconds_text(m_last_pts) + " s): the rest of the stream is shifted to follow on");
      m_pts_shift += follow_on - pts;
      pts = follow_on;
    }
    if (src->decode_error_flags != 0 || (src->flags & AV_FRAME_FLAG_CORRUPT) != 0) {
      note_error("frame " + std::to_string(m_next_index) + ": decoded from damaged data (errors concealed)");
    } else if (m_last_pts != AV_NOPTS_VALUE && pts - m_last_pts > frame_ticks() * 3 / 2 + 1 &&
               m_info.frame_rate.num > 0) {
      note_error("frames missing between " + seconds_text(m_last_pts) + " s and " + seconds_text(pts) + " s");
    }
    m_last_pts = pts;
    out->pts = pts;
    out->time_s = static_cast<double>(pts - m_start_pts) * m_info.time_base.value();
    out->index = m_next_index++;
    return Status::ok();
  }

  std::pair<int32_t, int32_t> output_size() const {
    const int32_t w = m_options.scale_width, h = m_options.scale_height;
    if (w <= 0 || h <= 0) return {m_info.width, m_info.height};
    if (!m_options.scale_keep_aspect) return {w, h};
    const double scale = std::min(static_cast<double>(w) / m_info.width, static_cast<double>(h) / m_info.height);
    return {std::clamp(static_cast<int32_t>(std::lround(m_info.width * scale)), 1, w),
            std::clamp(static_cast<int32_t>(std::lround(m_info.height * scale)), 1, h)};
  }

  std::string seconds_text(int64_t pts) const {
    char text[32];
    std::snprintf(text, sizeof(text), "%.3f", static_cast<double>(pts - m_start_pts) * m_info.time_base.value());
    return text;
  }

  // A file that ends well before the length its header declares was cut short: said once.
  void end_check() {
    if (m_end_checked) return;
    m_end_checked = true;
    if (m_info.frames > 1 && m_next_index < m_info.frames - 1 && !video_is_capture_device(m_info.path)) {
      note_error("the input ends early: " + std::to_string(m_next_index) + " of " + std::to_string(m_info.frames) +
                 " frames decoded (truncated?)");
    }
  }

  // One frame's duration in time-base ticks (for frames without a timestamp).
  int64_t frame_ticks() const {
    const double ticks = 1.0 / (m_info.frame_rate.value() * m_info.time_base.value());
    return ticks > 0 && ticks < 1e12 ? static_cast<int64_t>(ticks + 0.5) : 1;
  }

  // Once the first frame is out: whether NVDEC really decodes it (FFmpeg starts the hwaccel only then).
  void hw_outcome_note() {
    if (!m_hw_device) return;
    if (m_frame->format == AV_PIX_FMT_CUDA) return;
    decode_line_set("software (1 thread); " + nvdec_refusal());
  }

  std::string nvdec_refusal() const {
    return "software decode: NVDEC could not start for this stream (" +
           std::string(avcodec_get_name(m_codec->codec_id)) + " " + std::to_string(m_info.width) + "x" +
           std::to_string(m_info.height) + ")";
  }

  // The decode line, with the turn the display matrix asks for still said.
  void decode_line_set(const std::string& text) {
    m_info.decode = text;
    if (m_turn != 0) m_info.decode += "; turned " + std::to_string(m_turn) + " degrees clockwise (display matrix)";
  }

  // The decoder's complaints while the packets are kept wait for the first frame: a decoder that replaces it
  // (software_restart) makes them again.
  void decoder_error_note(std::string text) {
    if (m_replay.keeping() && m_replay.complete()) {  // else no start over can come
      m_kept_errors.push_back(std::move(text));
    } else {
      note_error(std::move(text));
    }
  }

  // The packets need keeping no more: the first frame showed which decoder stays, or the stream ended without one.
  void keeping_end() {
    if (!m_replay.keeping()) return;
    m_replay.clear();
    for (std::string& e : m_kept_errors) note_error(std::move(e));
    m_kept_errors.clear();
  }

  void note_error(std::string text) {
    ++m_error_count;
    if (m_errors.size() < kMaxKeptErrors) m_errors.push_back(std::move(text));
  }

  VideoInfo m_info;
  VideoReaderOptions m_options;
  AvInputPtr m_format;
  AvCodecContextPtr m_codec;
  AvBufferPtr m_hw_device;
  PacketReplay m_replay;  // kept until the first frame shows whether NVDEC started
  std::vector<std::string> m_kept_errors;  // decoder_error_note's, while m_replay keeps
  bool m_flush_after_replay = false;
  HwFormatChoice m_hw_choice;  // read by get_format through m_codec->opaque
  AvPacketPtr m_packet;
  AvFramePtr m_frame;
  AvFramePtr m_sw_frame;
  SwsContextPtr m_scaler;
  int m_stream = -1;
  int64_t m_start_pts = 0;
  int64_t m_last_pts = AV_NOPTS_VALUE;
  int32_t m_turn = 0;     // clockwise degrees the display matrix asks for
  ImageBuffer m_coded;    // with a turn: the frame as coded, before it
  int64_t m_pts_shift = 0;  // added to the input's timestamps since they last went back
  int64_t m_next_index = 0;
  int64_t m_packets = 0;
  int m_read_failures = 0;
  bool m_flushed = false;
  bool m_packet_held = false;  // m_packet waits to be sent again: the decoder was full
  bool m_end_checked = false;
  bool m_device_frames_kept = false;  // one was handed out on the device
  bool m_device_frames_off = false;  // device_frames could not be kept: RGB on the host from then on
  std::vector<std::string> m_errors;
  int64_t m_error_count = 0;
};

}  // namespace

bool video_is_capture_device(const std::string& path) { return std::string_view(path).starts_with("/dev/video"); }

Result<std::unique_ptr<VideoReader>> VideoReader::open(const std::string& path, const VideoReaderOptions& options) {
  auto reader = std::make_unique<FfmpegVideoReader>();
  KILN_TRY(reader->open(path, options));
  return std::unique_ptr<VideoReader>(std::move(reader));
}

}  // namespace kiln
