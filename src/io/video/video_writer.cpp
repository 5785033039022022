#include "io/video/video_writer.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "io/durable_file.h"
#include "io/video/audio_passthrough.h"
#include "io/video/cuda_encoder_frames.h"
#include "io/video/device_frame.h"
#include "io/video/ffmpeg_util.h"
#include "io/video/gray_planes.h"

extern "C" {
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}

namespace kiln {

namespace {

constexpr int kScalerFlags = SWS_BILINEAR | SWS_ACCURATE_RND;
constexpr const char* kNvenc = "h264_nvenc";  // hw_encode's, when no codec is named

struct EncoderChoice {
  std::string name;
  AVPixelFormat format = AV_PIX_FMT_YUV420P;
};

Result<EncoderChoice> encoder_choose(const AVOutputFormat* container, const VideoWriterOptions& o) {
  const std::string muxer = container->name;
  const bool alpha = o.pixels == VideoPixels::kRgba;
  const bool webm = muxer == "webm";
  const bool mov = muxer.find("mov") != std::string::npos && muxer.find("mp4") == std::string::npos;
  const bool mkv = muxer == "matroska";
  EncoderChoice c;
  if (!o.codec.empty()) {
    c.name = o.codec;
  } else if (alpha) {
    if (webm) c.name = "libvpx-vp9";
    else if (mov) c.name = "qtrle";
    else if (mkv) c.name = "ffv1";
    else return invalid_argument(std::string("a ") + container->name +
                                 " file cannot hold an alpha channel: write .webm, .mov or .mkv");
  } else {
    c.name = webm ? "libvpx-vp9" : "libx264";
  }
  const bool odd = (o.width % 2) != 0 || (o.height % 2) != 0;
  if (c.name == "libvpx-vp9") c.format = alpha ? AV_PIX_FMT_YUVA420P : AV_PIX_FMT_YUV420P;
  else if (c.name == "qtrle") c.format = alpha ? AV_PIX_FMT_ARGB : AV_PIX_FMT_RGB24;
  else if (c.name == "ffv1") c.format = alpha ? AV_PIX_FMT_BGRA : AV_PIX_FMT_YUV444P;
  else if (c.name == "libx264") c.format = odd ? AV_PIX_FMT_YUV444P : AV_PIX_FMT_YUV420P;
  else c.format = AV_PIX_FMT_NONE;  // another encoder: its first listed format
  return c;
}

// RGB -> YUV with `colour`'s matrix and range (the RGB side as swscale set it up).
void scaler_colour_set(SwsContext* scaler, const VideoColour& colour) {
  int* inv_table = nullptr;
  int* table = nullptr;
  int src_range = 0, dst_range = 0, brightness = 0, contrast = 0, saturation = 0;
  if (sws_getColorspaceDetails(scaler, &inv_table, &src_range, &table, &dst_range, &brightness, &contrast,
                               &saturation) < 0) {
    return;
  }
  sws_setColorspaceDetails(scaler, inv_table, src_range, sws_getCoefficients(sws_colorspace(colour.space)),
                           colour.range == AVCOL_RANGE_JPEG ? 1 : 0, brightness, contrast, saturation);
}

AVPixelFormat input_format(VideoPixels pixels) {
  switch (pixels) {
    case VideoPixels::kRgba: return AV_PIX_FMT_RGBA;
    case VideoPixels::kGray: return AV_PIX_FMT_GRAY8;
    case VideoPixels::kRgb: break;
  }
  return AV_PIX_FMT_RGB24;
}

int32_t pixel_channels(VideoPixels pixels) {
  return pixels == VideoPixels::kRgba ? 4 : pixels == VideoPixels::kGray ? 1 : 3;
}

class FfmpegVideoWriter final : public VideoWriter {
 public:
  ~FfmpegVideoWriter() override {
    close_output();
    if (!m_finished && !m_temp.empty()) ::unlink(m_temp.c_str());
  }

  Status open(const std::string& path, const VideoWriterOptions& options) {
    av_log_quiet();
    m_path = path;
    m_options = options;
    if (options.width <= 0 || options.height <= 0) return invalid_argument(path + ": video size must be positive");
    if (options.time_base.num <= 0 || options.time_base.den <= 0) {
      return invalid_argument(path + ": bad time base");
    }
    const AVOutputFormat* container = av_guess_format(nullptr, path.c_str(), nullptr);
    if (container == nullptr) {
      return invalid_argument(path + ": unknown video container (name the file .mp4, .mkv, .mov or .webm)");
    }
    KILN_TRY_ASSIGN(EncoderChoice choice, encoder_choose(container, options));
    if (options.device_frames && options.pixels == VideoPixels::kRgba) {
      return invalid_argument(path + ": device frames are gray or RGB (NVENC has no alpha)");
    }
    m_device_why = options.device_frames ? "the encoder is not NVENC" : "device frames not asked for";
    std::string fallback;  // why NVENC is not used, when it was tried
    const AVCodec* encoder = nullptr;
    const bool nvenc_named = video_encoder_is_nvenc(options.codec);
    const AVCodecID named_id = options.codec == "hevc_nvenc" ? AV_CODEC_ID_HEVC : AV_CODEC_ID_H264;
    if (nvenc_named && avformat_query_codec(container, named_id, FF_COMPLIANCE_NORMAL) == 0) {
      return invalid_argument(path + ": a " + container->name + " file cannot hold " + avcodec_get_name(named_id));
    }
    if (nvenc_named || (options.codec.empty() && options.hw_encode != VideoHwEncode::kNone)) {
      auto nvenc = nvenc_open(container, nvenc_named ? options.codec : kNvenc);
      if (nvenc.is_ok()) {
        encoder = nvenc.value().first;
        choice = nvenc.value().second;
      } else if (nvenc_named) {
        return unsupported_format(path + ": " + options.codec + " asked for, but " + nvenc.status().message());
      } else if (options.hw_encode == VideoHwEncode::kCuda) {
        return unsupported_format(path + ": hardware encode (cuda) asked for, but " + nvenc.status().message());
      } else {
        fallback = "; software encode: " + nvenc.status().message();
        m_device_why = "the encoder is not NVENC";  // not the CUDA frames' reason: NVENC itself did not start
      }
    }
    if (encoder == nullptr) {
      encoder = avcodec_find_encoder_by_name(choice.name.c_str());
      if (encoder == nullptr) return unsupported_format(path + ": this FFmpeg build has no encoder " + choice.name);
      if (avformat_query_codec(container, encoder->id, FF_COMPLIANCE_NORMAL) == 0) {
        return invalid_argument(path + ": a " + container->name + " file cannot hold " +
                                avcodec_get_name(encoder->id));
      }
      if (choice.format == AV_PIX_FMT_NONE) {
        choice.format = encoder->pix_fmts != nullptr ? encoder->pix_fmts[0] : AV_PIX_FMT_YUV420P;
      }
      const AvLogCapture capture;
      if (int rc = codec_open(encoder, choice, container, nullptr); rc < 0) {
        return unsupported_format(path + ": cannot open the " + choice.name + " encoder: " +
                                  capture.text(av_error_text(rc)));
      }
    }

    KILN_TRY_ASSIGN(m_temp, temp_file_create(path));
    AVFormatContext* raw = nullptr;
    if (int rc = avformat_alloc_output_context2(&raw, container, nullptr, m_temp.c_str()); rc < 0) {
      return io_error(path + ": " + av_error_text(rc));
    }
    m_output = raw;
    m_video = avformat_new_stream(m_output, nullptr);
    if (m_video == nullptr) return Status(Errc::kOutOfMemory, path + ": cannot add a stream");
    m_video->time_base = m_codec->time_base;
    m_video->avg_frame_rate = m_codec->framerate;
    if (int rc = avcodec_parameters_from_context(m_video->codecpar, m_codec.get()); rc < 0) {
      return io_error(path + ": " + av_error_text(rc));
    }
    // HEVC in MP4 and MOV as hvc1 (parameter sets in the header), the tag Apple's players require; hev1 is FFmpeg's.
    const std::string muxer = container->name;
    if (encoder->id == AV_CODEC_ID_HEVC && (muxer == "mp4" || muxer == "mov")) {
      m_video->codecpar->codec_tag = MKTAG('h', 'v', 'c', '1');
    }
    if (!options.audio_from.empty()) KILN_TRY(m_audio.open(options.audio_from, container, m_output, &m_notes));

    if (int rc = avio_open(&m_output->pb, m_temp.c_str(), AVIO_FLAG_WRITE); rc < 0) {
      return io_error(path + ": cannot create " + m_temp + ": " + av_error_text(rc));
    }
    if (int rc = avformat_write_header(m_output, nullptr); rc < 0) {
      return io_error(path + ": cannot write the header: " + av_error_text(rc));
    }
    m_scaler.reset(sws_getContext(options.width, options.height, input_format(options.pixels), options.width,
                                  options.height, choice.format, kScalerFlags, nullptr, nullptr, nullptr));
    if (!m_scaler) return unsupported_format(path + ": cannot convert frames for the " + choice.name + " encoder");
    if (colour_tagged(choice.format)) scaler_colour_set(m_scaler.get(), options.colour);
    if (options.pixels == VideoPixels::kGray) {
      auto gray = GrayPlanes::make(choice.format, kScalerFlags);
      if (gray.is_ok()) m_gray = std::move(gray).value();
    }
    m_frame.reset(av_frame_alloc());
    m_packet.reset(av_packet_alloc());
    if (!m_frame || !m_packet) return Status(Errc::kOutOfMemory, path + ": cannot allocate frames");
    m_frame->format = choice.format;
    m_frame->width = options.width;
    m_frame->height = options.height;
    if (int rc = av_frame_get_buffer(m_frame.get(), 0); rc < 0) {
      return Status(Errc::kOutOfMemory, path + ": " + av_error_text(rc));
    }
    const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(choice.format);
    m_description = std::string(avcodec_get_name(encoder->id)) + " (" + choice.name + ", " + (d ? d->name : "?") +
                    (m_cuda_frames ? " in device memory" : "") + ") in " + container->name + fallback;
    if (options.device_frames && video_encoder_is_nvenc(choice.name) && !m_cuda_frames) {
      m_description += "; host frames: " + m_device_why;
    }
    return Status::ok();
  }

  Status write(const ImageView& image, int64_t pts) override {
    if (m_finished) return invalid_argument(m_path + ": write after finish");
    if (image.type != PixelType::kU8 || image.layout != Layout::kHWC || image.width != m_options.width ||
        image.height != m_options.height || image.channels != pixel_channels(m_options.pixels)) {
      return invalid_argument(m_path + ": a frame must be u8 HWC " + std::to_string(m_options.width) + "x" +
                              std::to_string(m_options.height) + "x" +
                              std::to_string(pixel_channels(m_options.pixels)));
    }
    KILN_TRY(pts_check(pts));
    if (int rc = av_frame_make_writable(m_frame.get()); rc < 0) {
      return Status(Errc::kOutOfMemory, m_path + ": " + av_error_text(rc));
    }
    if (m_gray) {
      m_gray->convert(image, m_frame.get());
    } else {
      const uint8_t* src[4] = {static_cast<const uint8_t*>(image.data), nullptr, nullptr, nullptr};
      const int src_stride[4] = {static_cast<int>(image.row_stride), 0, 0, 0};
      sws_scale(m_scaler.get(), src, src_stride, 0, image.height, m_frame->data, m_frame->linesize);
    }
    m_frame->pts = pts;
    AVFrame* frame = m_frame.get();
    if (m_cuda_frames) {
      KILN_TRY_ASSIGN(frame, m_cuda_frames->upload(*m_frame));
    }
    m_last_pts = pts;
    ++m_frames;
    return encode(frame);
  }

  Result<VideoDeviceFrame> device_frame() override {
    if (m_finished) return invalid_argument(m_path + ": device frame after finish");
    if (!m_cuda_frames) return Status(Errc::kNotImplemented, m_path + ": no device frames: " + m_device_why);
    if (!m_gray && !yuv_matrix_is_swscales(m_options.colour.space)) {  // FCC, SMPTE 240M: no such kiln matrix
      return Status(Errc::kNotImplemented, m_path + ": no device frames: the output's colour space (" +
                                               std::to_string(m_options.colour.space) + ") has no kiln YUV matrix");
    }
    KILN_TRY_ASSIGN(VideoDeviceFrame frame, m_cuda_frames->next());
    if (m_gray) m_gray->levels_fill(&frame);
    frame.matrix = yuv_matrix_of(m_options.colour.space);
    frame.full_range = m_options.colour.range == AVCOL_RANGE_JPEG;
    return frame;
  }

  Status write_device(int64_t pts) override {
    if (m_finished) return invalid_argument(m_path + ": write after finish");
    if (!m_cuda_frames) return Status(Errc::kNotImplemented, m_path + ": no device frames: " + m_device_why);
    KILN_TRY(pts_check(pts));
    KILN_TRY_ASSIGN(AVFrame * frame, m_cuda_frames->take(pts));
    m_last_pts = pts;
    ++m_frames;
    return encode(frame);
  }

  Status finish() override {
    if (m_finished) return Status::ok();
    KILN_TRY(encode(nullptr));
    KILN_TRY(m_audio.copy_until(-1, m_output, m_path, &m_notes));
    if (int rc = av_write_trailer(m_output); rc < 0) {
      return io_error(m_path + ": cannot write the trailer: " + av_error_text(rc));
    }
    const int closed = avio_closep(&m_output->pb);
    if (closed < 0) return io_error(m_path + ": " + av_error_text(closed));
    KILN_TRY(file_commit(m_temp, m_path));
    m_finished = true;
    return Status::ok();
  }

  std::string description() const override {
    std::string text = m_description;
    if (m_cuda_frames) {
      text += ", " + std::to_string(m_cuda_frames->taken()) + " of " + std::to_string(m_frames) +
              " frames from device memory";
    }
    const int copied = m_audio.streams();
    if (copied > 0) text += ", " + std::to_string(copied) + " audio stream" + (copied > 1 ? "s" : "") + " copied";
    return text;
  }
  const std::vector<std::string>& notes() const override { return m_notes; }

 private:
  Status pts_check(int64_t pts) const {
    if (m_frames > 0 && pts <= m_last_pts) {
      return invalid_argument(m_path + ": frame timestamps must increase (" + std::to_string(pts) + " after " +
                              std::to_string(m_last_pts) + ")");
    }
    return Status::ok();
  }

  // Allocates and opens m_codec for `encoder`; FFmpeg's error code when it cannot (m_codec is then empty).
  int codec_open(const AVCodec* encoder, const EncoderChoice& choice, const AVOutputFormat* container,
                 AVBufferRef* hw_device) {
    const VideoWriterOptions& options = m_options;
    m_codec.reset(avcodec_alloc_context3(encoder));
    if (!m_codec) return AVERROR(ENOMEM);
    m_codec->width = options.width;
    m_codec->height = options.height;
    m_codec->pix_fmt = choice.format;
    m_codec->time_base = AVRational{static_cast<int>(options.time_base.num), static_cast<int>(options.time_base.den)};
    if (options.frame_rate.num > 0) {
      m_codec->framerate = AVRational{static_cast<int>(options.frame_rate.num),
                                      static_cast<int>(options.frame_rate.den)};
    }
    m_codec->thread_count = options.threads;
    if ((container->flags & AVFMT_GLOBALHEADER) != 0) m_codec->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    const std::string crf = std::to_string(options.crf);
    if (choice.name == "libx264") {
      av_opt_set(m_codec->priv_data, "preset", options.preset.c_str(), 0);
      av_opt_set(m_codec->priv_data, "crf", crf.c_str(), 0);
      if (options.low_latency) av_opt_set(m_codec->priv_data, "tune", "zerolatency", 0);
    } else if (choice.name == "libvpx-vp9") {
      av_opt_set(m_codec->priv_data, "crf", crf.c_str(), 0);
      av_opt_set(m_codec->priv_data, "row-mt", "1", 0);
      av_opt_set(m_codec->priv_data, "deadline", options.low_latency ? "realtime" : "good", 0);
      av_opt_set(m_codec->priv_data, "cpu-used", options.low_latency ? "8" : "5", 0);
      m_codec->bit_rate = 0;
    } else if (video_encoder_is_nvenc(choice.name)) {
      // Constant quality (vbr with cq and no bit-rate cap, NVIDIA's recommended equivalent of x264's crf).
      av_opt_set(m_codec->priv_data, "preset", options.low_latency ? "p1" : "p4", 0);
      av_opt_set(m_codec->priv_data, "tune", options.low_latency ? "ull" : "hq", 0);
      av_opt_set(m_codec->priv_data, "rc", "vbr", 0);
      av_opt_set(m_codec->priv_data, "cq", std::to_string(std::min(options.crf, 51)).c_str(), 0);  // NVENC's range
      if (options.low_latency) {
        av_opt_set(m_codec->priv_data, "zerolatency", "1", 0);
        av_opt_set(m_codec->priv_data, "delay", "0", 0);
        m_codec->max_b_frames = 0;
      }
      m_codec->bit_rate = 0;
    }
    if (colour_tagged(choice.format)) {
      m_codec->colorspace = static_cast<AVColorSpace>(options.colour.space);
      m_codec->color_range = static_cast<AVColorRange>(options.colour.range);
      m_codec->color_primaries = static_cast<AVColorPrimaries>(options.colour.primaries);
      m_codec->color_trc = static_cast<AVColorTransferCharacteristic>(options.colour.transfer);
    }
    if (hw_device != nullptr) {
      m_codec->hw_device_ctx = av_buffer_ref(hw_device);
      if (m_codec->hw_device_ctx == nullptr) return AVERROR(ENOMEM);
    }
    if (m_cuda_frames) {  // the encoder reads CUDA frames of the pool; choice.format is the host frames' format
      m_codec->pix_fmt = AV_PIX_FMT_CUDA;
      m_codec->hw_frames_ctx = av_buffer_ref(m_cuda_frames->frames_context());
      if (m_codec->hw_frames_ctx == nullptr) return AVERROR(ENOMEM);
    }
    const int rc = avcodec_open2(m_codec.get(), encoder, nullptr);
    if (rc < 0) m_codec.reset();
    return rc;
  }

  // RGB(A) frames into a YUV encoder take the input's colour description; gray masks and RGB encoders none.
  bool colour_tagged(AVPixelFormat format) const {
    const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(format);
    return m_options.pixels != VideoPixels::kGray && d != nullptr && (d->flags & AV_PIX_FMT_FLAG_RGB) == 0;
  }

  // NVENC (`name`: h264_nvenc or hevc_nvenc) for this file, opened on the CUDA backend's device; the reason when it
  // cannot be.
  Result<std::pair<const AVCodec*, EncoderChoice>> nvenc_open(const AVOutputFormat* container,
                                                               const std::string& name) {
    const std::string muxer = container->name;
    if (m_options.pixels == VideoPixels::kRgba) return Status(Errc::kUnsupportedFormat, "NVENC has no alpha channel");
    if (muxer == "webm") return Status(Errc::kUnsupportedFormat, "NVENC writes no VP9 for a webm file");
    const AVCodec* encoder = avcodec_find_encoder_by_name(name.c_str());
    if (encoder == nullptr) return Status(Errc::kUnsupportedFormat, "this FFmpeg build has no " + name);
    if (avformat_query_codec(container, encoder->id, FF_COMPLIANCE_NORMAL) == 0) {
      return Status(Errc::kUnsupportedFormat, "a " + muxer + " file cannot hold " + avcodec_get_name(encoder->id));
    }
    auto device = cuda_hw_device_open(m_options.cuda_device);
    if (!device.is_ok()) return Status(Errc::kDeviceError, "NVENC: " + device.status().message());
    const bool odd = (m_options.width % 2) != 0 || (m_options.height % 2) != 0;
    if (m_options.device_frames) {
      const AvLogCapture capture;
      auto frames = CudaEncoderFrames::make(device.value().get(), m_options.width, m_options.height);
      if (frames.is_ok()) {
        m_cuda_frames = std::move(frames).value();
        const EncoderChoice choice{name, AV_PIX_FMT_NV12};
        const int rc = codec_open(encoder, choice, container, device.value().get());
        if (rc >= 0) return std::make_pair(encoder, choice);
        m_device_why = "NVENC could not start on CUDA frames (" + capture.text(av_error_text(rc)) + ")";
        m_cuda_frames.reset();
      } else {
        m_device_why = frames.status().message();
      }
    }
    const EncoderChoice choice{name, odd ? AV_PIX_FMT_YUV444P : AV_PIX_FMT_YUV420P};
    const AvLogCapture capture;
    if (int rc = codec_open(encoder, choice, container, device.value().get()); rc < 0) {
      return Status(Errc::kDeviceError, "NVENC could not start (" + capture.text(av_error_text(rc)) + ")");
    }
    return std::make_pair(encoder, choice);
  }

  Status encode(AVFrame* frame) {
    if (int rc = avcodec_send_frame(m_codec.get(), frame); rc < 0) {
      return io_error(m_path + ": encoding: " + av_error_text(rc));
    }
    for (;;) {
      const int rc = avcodec_receive_packet(m_codec.get(), m_packet.get());
      if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return Status::ok();
      if (rc < 0) return io_error(m_path + ": encoding: " + av_error_text(rc));
      av_packet_rescale_ts(m_packet.get(), m_codec->time_base, m_video->time_base);
      m_packet->stream_index = m_video->index;
      const int64_t dts = m_packet->dts != AV_NOPTS_VALUE ? m_packet->dts : m_packet->pts;
      KILN_TRY(m_audio.copy_until(av_rescale_q(dts, m_video->time_base, AV_TIME_BASE_Q), m_output, m_path, &m_notes));
      if (int w = av_interleaved_write_frame(m_output, m_packet.get()); w < 0) {
        return io_error(m_path + ": writing: " + av_error_text(w));
      }
    }
  }

  void close_output() {
    if (m_output == nullptr) return;
    if (m_output->pb != nullptr) avio_closep(&m_output->pb);
    avformat_free_context(m_output);
    m_output = nullptr;
  }

  std::string m_path;
  std::string m_temp;
  VideoWriterOptions m_options;
  AVFormatContext* m_output = nullptr;
  AVStream* m_video = nullptr;
  AvCodecContextPtr m_codec;
  SwsContextPtr m_scaler;
  std::optional<GrayPlanes> m_gray;  // gray frames into yuv420p / nv12 / yuv444p without the scaler
  std::optional<CudaEncoderFrames> m_cuda_frames;  // NVENC reads CUDA frames (device_frames)
  std::string m_device_why;  // why device_frame() has none
  AvFramePtr m_frame;
  AvPacketPtr m_packet;
  AudioPassthrough m_audio;
  std::vector<std::string> m_notes;
  std::string m_description;
  int64_t m_frames = 0;
  int64_t m_last_pts = 0;
  bool m_finished = false;
};

}  // namespace

bool video_encoder_is_nvenc(const std::string& codec) { return codec == "h264_nvenc" || codec == "hevc_nvenc"; }

Result<std::unique_ptr<VideoWriter>> VideoWriter::open(const std::string& path, const VideoWriterOptions& options) {
  auto writer = std::make_unique<FfmpegVideoWriter>();
  KILN_TRY(writer->open(path, options));
  return std::unique_ptr<VideoWriter>(std::move(writer));
}

}  // namespace kiln
