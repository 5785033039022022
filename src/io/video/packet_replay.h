// The packets a decoder was sent before its first frame, kept so that a decoder opened in its place can be sent them
// again from the first without seeking the input (a pipe or a camera cannot seek). The reader uses it when NVDEC
// could not start for a stream: FFmpeg then decodes in software on the single thread NVDEC was given, and the reader
// starts over with a software decoder on every thread. Bounded: past kMaxPackets or kMaxBytes nothing more is kept
// and no start over is possible.
#pragma once

#include <cstddef>
#include <deque>

#include "io/video/ffmpeg_util.h"

namespace kiln {

class PacketReplay {
 public:
  static constexpr size_t kMaxPackets = 256;
  static constexpr size_t kMaxBytes = size_t{64} << 20;

  void keep_start() { m_keeping = true; }
  bool keeping() const { return m_keeping; }
  // A reference to `packet` (its data is shared, not copied).
  void keep(const AVPacket* packet);
  // True when every packet since keep_start() is kept (none was left out for the bound or a failed reference).
  bool complete() const { return !m_overflowed; }
  // Stops keeping; the kept packets are given out again by next(), from the first.
  void replay_start() { m_keeping = false; }
  // Keeps nothing more and lets the kept packets go.
  void clear();
  // Moves the next kept packet into `into` (after replay_start); false when none is left.
  bool next(AVPacket* into);

 private:
  std::deque<AvPacketPtr> m_kept;
  size_t m_bytes = 0;
  bool m_keeping = false;
  bool m_overflowed = false;
};

}  // namespace kiln
