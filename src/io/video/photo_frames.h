// Frames made from a real photograph, for the videos benchmarks and tests write (kiln bench segment, the segment and
// GPU command tests): no ffmpeg program needed.
#pragma once

#include <cstdint>
#include <string>

#include "io/video/video_writer.h"

namespace kiln {

// Writes `frames` frames of width x height: the photo fitted (nearest) to the frame's height over a grey canvas,
// centred and moving `step` pixels right per frame (from step * frames / 2 left of the centre). Timestamps from *pts
// on, advanced. The photo's decode error, or the writer's.
Status photo_frames_write(VideoWriter& writer, const std::string& photo, int32_t width, int32_t height, int32_t frames,
                          int32_t step, int64_t* pts);

}  // namespace kiln
