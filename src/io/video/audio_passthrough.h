// The audio streams of another file copied packet for packet into a video being written (VideoWriterOptions::
// audio_from), interleaved with the video by time; notes for the streams it cannot copy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/video/ffmpeg_util.h"
#include "kiln/status.h"

namespace kiln {

class AudioPassthrough {
 public:
  // Opens `from` and adds an output stream to `output` for each audio stream the container can hold; a file that
  // cannot be read, or a stream the container cannot hold, is a note, not an error.
  Status open(const std::string& from, const AVOutputFormat* container, AVFormatContext* output,
              std::vector<std::string>* notes);
  // Copies audio packets up to `until_us` (AV_TIME_BASE units; -1 = all), keeping the first later one for the
  // next call, so that audio and video stay interleaved. `path`: the output's, for errors.
  Status copy_until(int64_t until_us, AVFormatContext* output, const std::string& path,
                    std::vector<std::string>* notes);
  int streams() const;  // audio streams copied

 private:
  // Where the input's audio timestamps go back or stand still (files joined end to end), the rest of that stream is
  // shifted to follow on, as the reader does for the video: the muxer takes only increasing timestamps, and both
  // streams stay together.
  void timestamps_follow_on(AVPacket& packet, std::vector<std::string>* notes);

  AvInputPtr m_input;
  AvPacketPtr m_packet;
  bool m_pending = false;
  std::vector<AVStream*> m_map;  // input stream index -> output stream (nullptr: not copied)
  struct Times {
    int64_t shift = 0;  // added to the input's timestamps (its time base)
    int64_t last = AV_NOPTS_VALUE;
    int64_t last_duration = 0;
    bool noted = false;
  };
  std::vector<Times> m_times;  // by input stream index
};

}  // namespace kiln
