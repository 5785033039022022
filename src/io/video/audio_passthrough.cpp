#include "io/video/audio_passthrough.h"

#include <algorithm>

namespace kiln {

Status AudioPassthrough::open(const std::string& from, const AVOutputFormat* container, AVFormatContext* output,
                              std::vector<std::string>* notes) {
  AVFormatContext* raw = nullptr;
  if (int rc = avformat_open_input(&raw, from.c_str(), nullptr, nullptr); rc < 0) {
    notes->push_back("audio not copied: cannot open " + from + ": " + av_error_text(rc));
    return Status::ok();
  }
  m_input.reset(raw);
  if (avformat_find_stream_info(raw, nullptr) < 0) {
    notes->push_back("audio not copied: cannot read the streams of " + from);
    m_input.reset();
    return Status::ok();
  }
  m_map.assign(raw->nb_streams, nullptr);
  m_times.assign(raw->nb_streams, Times{});
  for (unsigned i = 0; i < raw->nb_streams; ++i) {
    const AVCodecParameters* par = raw->streams[i]->codecpar;
    if (par->codec_type != AVMEDIA_TYPE_AUDIO) continue;
    if (avformat_query_codec(container, par->codec_id, FF_COMPLIANCE_NORMAL) == 0) {
      notes->push_back(std::string("audio stream ") + std::to_string(i) + " (" + avcodec_get_name(par->codec_id) +
                       ") not copied: a " + container->name + " file cannot hold it");
      continue;
    }
    AVStream* out = avformat_new_stream(output, nullptr);
    if (out == nullptr || avcodec_parameters_copy(out->codecpar, par) < 0) {
      return Status(Errc::kOutOfMemory, "cannot add an audio stream from " + from);
    }
    out->codecpar->codec_tag = 0;
    out->time_base = raw->streams[i]->time_base;
    m_map[i] = out;
  }
  m_packet.reset(av_packet_alloc());
  return Status::ok();
}

Status AudioPassthrough::copy_until(int64_t until_us, AVFormatContext* output, const std::string& path,
                                    std::vector<std::string>* notes) {
  if (!m_input || !m_packet) return Status::ok();
  for (;;) {
    if (!m_pending) {
      const int rc = av_read_frame(m_input.get(), m_packet.get());
      if (rc < 0) {
        if (rc != AVERROR_EOF) notes->push_back("audio copy stopped early: " + av_error_text(rc));
        m_input.reset();
        return Status::ok();
      }
      const int s = m_packet->stream_index;
      if (s < 0 || static_cast<size_t>(s) >= m_map.size() || m_map[s] == nullptr) {
        av_packet_unref(m_packet.get());
        continue;
      }
      timestamps_follow_on(*m_packet, notes);
      m_pending = true;
    }
    const AVStream* in = m_input->streams[m_packet->stream_index];
    const int64_t ts = m_packet->dts != AV_NOPTS_VALUE ? m_packet->dts : m_packet->pts;
    if (until_us >= 0 && ts != AV_NOPTS_VALUE && av_rescale_q(ts, in->time_base, AV_TIME_BASE_Q) > until_us) {
      return Status::ok();
    }
    AVStream* out = m_map[m_packet->stream_index];
    av_packet_rescale_ts(m_packet.get(), in->time_base, out->time_base);
    m_packet->stream_index = out->index;
    m_packet->pos = -1;
    m_pending = false;
    if (int w = av_interleaved_write_frame(output, m_packet.get()); w < 0) {
      return io_error(path + ": writing audio: " + av_error_text(w));
    }
  }
}

void AudioPassthrough::timestamps_follow_on(AVPacket& packet, std::vector<std::string>* notes) {
  const auto s = static_cast<size_t>(packet.stream_index);
  Times& t = m_times[s];
  if (packet.dts == AV_NOPTS_VALUE) packet.dts = packet.pts;
  if (packet.dts == AV_NOPTS_VALUE) return;
  packet.dts += t.shift;
  if (packet.pts != AV_NOPTS_VALUE) packet.pts += t.shift;
  if (t.last != AV_NOPTS_VALUE && packet.dts <= t.last) {
    const int64_t follow_on = t.last + std::max<int64_t>(t.last_duration, 1);
    const int64_t shift = follow_on - packet.dts;
    t.shift += shift;
    packet.dts += shift;
    if (packet.pts != AV_NOPTS_VALUE) packet.pts += shift;
    if (!t.noted) {
      notes->push_back("audio stream " + std::to_string(s) + ": the timestamps go back; shifted to follow on");
      t.noted = true;
    }
  }
  t.last = packet.dts;
  t.last_duration = packet.duration;
}

int AudioPassthrough::streams() const {
  int copied = 0;
  for (const AVStream* s : m_map) copied += s != nullptr ? 1 : 0;
  return copied;
}

}  // namespace kiln
