// Test videos made from real photographs with kiln's own writer (no ffmpeg program needed: the lent GPU machine has
// none).
#pragma once

#include <string>
#include <vector>

#include "kiln/codec.h"

namespace kiln::test {

// The python3-skimage photographs: a person, and a scene with none.
inline constexpr const char* kAstronautPhoto = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png";
inline constexpr const char* kRocketPhoto = "/usr/lib/python3/dist-packages/skimage/data/rocket.jpg";

// `frames` frames of width x height at 30 frames/s (H.264, or what `path`'s extension names): the photo scaled
// (nearest) to the frame's height, moving 3 px right per frame over a grey canvas. A failed ASSERT on error.
void photo_video_write(const std::string& photo, const std::string& path, int width = 320, int height = 240,
                       int frames = 16);

// Every frame of a video as kiln's reader gives it (RGB); a failed EXPECT on error.
std::vector<ImageBuffer> video_frames_read(const std::string& path);

}  // namespace kiln::test
