// Where the frames of one segment input come from: a video file or capture device (FFmpeg), or an image sequence
// (a folder of .jpg/.png files or a glob such as "shots/*.png", in name order, at a given frame rate).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/video/video_reader.h"

namespace kiln {

class FrameSource {
 public:
  // Folders and patterns with * or ? are image sequences; everything else opens as a video.
  static Result<std::unique_ptr<FrameSource>> open(const std::string& input, const VideoReaderOptions& options,
                                                   double sequence_fps);
  virtual ~FrameSource() = default;
  virtual const VideoInfo& info() const = 0;
  // The next frame; *end after the last. An image that cannot be decoded is skipped and counted.
  virtual Status read(VideoFrame* frame, bool* end) = 0;
  // A video's device frames end here (VideoReader::device_frames_end); an image sequence has none.
  virtual Status device_frames_end(VideoFrame* frame, const std::string& why) = 0;
  virtual const std::vector<std::string>& errors() const = 0;
  virtual int64_t error_count() const = 0;
  virtual bool is_video_file() const = 0;  // (its audio can be copied)
};

// True for a folder or a pattern holding * or ?.
bool frame_source_is_sequence(const std::string& input);

}  // namespace kiln
