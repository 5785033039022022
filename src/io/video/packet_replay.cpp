#include "io/video/packet_replay.h"

extern "C" {
#include <libavcodec/packet.h>
}

namespace kiln {

void PacketReplay::keep(const AVPacket* packet) {
  if (!m_keeping || m_overflowed) return;
  m_bytes += static_cast<size_t>(packet->size);
  AvPacketPtr kept(m_kept.size() < kMaxPackets && m_bytes <= kMaxBytes ? av_packet_clone(packet) : nullptr);
  if (!kept) {
    m_overflowed = true;
    m_kept.clear();
    return;
  }
  m_kept.push_back(std::move(kept));
}

void PacketReplay::clear() {
  m_keeping = false;
  m_kept.clear();
  m_bytes = 0;
}

bool PacketReplay::next(AVPacket* into) {
  if (m_keeping || m_kept.empty()) return false;
  av_packet_unref(into);
  av_packet_move_ref(into, m_kept.front().get());
  m_kept.pop_front();
  return true;
}

}  // namespace kiln
