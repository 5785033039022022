// Segmentation mattes: a batch of f32 1-channel probability maps (a model's output) -> u8 1-channel images of any
// size (the video frame's): each map is upsampled bilinearly (half-pixel centres) over a region of it to its
// output's size, then thresholded into a background/foreground mask or ramped into an alpha over a feather band, in
// one pass; or that alpha blends a frame over a background (composite). Optionally each output's person pixels are
// counted (OpCall::results: one int64_t per image).
#pragma once

#include <cstdint>
#include <string>

#include "kiln/enum_names.h"
#include "kiln/image.h"
#include "kiln/ops.h"

namespace kiln {

// composite: the alpha blends a frame over a background (u8 RGB out).
enum class MatteOutput : uint8_t { kMask = 0, kAlpha, kComposite };
inline constexpr EnumName<MatteOutput> kMatteOutputNames[] = {
    {MatteOutput::kMask, "mask"}, {MatteOutput::kAlpha, "alpha"}, {MatteOutput::kComposite, "composite"}};
inline const char* matte_output_name(MatteOutput o) { return enum_name(kMatteOutputNames, o); }

// The part of the probability map an output covers, in map pixels: all of it for a stretched frame, the letterbox
// rectangle for a letterboxed one. Width or height 0: the whole map.
struct MatteRegion {
  float x = 0, y = 0, width = 0, height = 0;
};

// See docs/ops/matte.md.
struct MatteParams {
  MatteOutput output = MatteOutput::kMask;
  float threshold = 0.5f;   // mask: probability >= threshold -> foreground; in (0, 1)
  float feather = 0.1f;     // alpha: the band of probabilities, centred on the threshold, ramped from 0 to 255
  uint8_t foreground = 255; // mask: value of person pixels
  uint8_t background = 0;   // mask: value of the other pixels (not the foreground's: a video encoder's black and
                            // white luma, 16 and 235, let a mask go straight into an encoder's frame)
  MatteRegion region;
  // composite: per output image, the frame and the background it is blended over (u8 RGB HWC, the output's size, in
  // the call's memory space): round(background + (frame - background) * alpha / 255) per channel.
  const ImageView* frames = nullptr;
  const ImageView* backgrounds = nullptr;
};

}  // namespace kiln
