// A video's display matrix (phones record sideways and say how to turn the picture): the clockwise quarter turns it
// asks for, and the turn of a decoded RGB frame into the picture as it is meant to be seen.
#pragma once

#include <cstdint>

#include "io/video/ffmpeg_util.h"
#include "kiln/codec.h"

namespace kiln {

// 0, 90, 180 or 270: the stream's display matrix as clockwise degrees; 0 without one, or for a turn that is not a
// quarter (or a mirror), which is left as coded.
int32_t display_rotation_clockwise(const AVStream* stream);

// `coded` (RGB) turned `clockwise` degrees (90, 180, 270) into `out`; width and height swap for 90 and 270.
void rgb_turn(const ImageBuffer& coded, int32_t clockwise, ImageBuffer* out);

}  // namespace kiln
