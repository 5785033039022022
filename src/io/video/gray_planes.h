// A gray mask frame into the encoder's YUV planes without swscale: the luma of every gray level and the constant
// chroma are taken once from swscale itself (a 256-level ramp through the same conversion), then each frame is a
// table lookup per pixel and two fills, the same bytes swscale writes at a fraction of its time (1.5 ms of a
// 1280 x 720 frame in swscale's exact-rounding path).
#pragma once

#include <array>
#include <cstdint>

#include "io/video/ffmpeg_util.h"
#include "io/video/video_writer.h"
#include "kiln/image.h"
#include "kiln/status.h"

namespace kiln {

class GrayPlanes {
 public:
  // For YUV420P, NV12 and YUV444P frames, with the flags the writer's scaler uses; UnsupportedFormat for others.
  static Result<GrayPlanes> make(AVPixelFormat format, int flags);
  // Fills frame's planes (its format, width x height = the image's) from a u8 one-channel image.
  void convert(const ImageView& gray, AVFrame* frame) const;

  uint8_t luma(uint8_t gray) const { return m_luma[gray]; }
  uint8_t u() const { return m_u; }
  uint8_t v() const { return m_v; }
  // A device frame's gray levels: the luma of 0 and 255, the chroma.
  void levels_fill(VideoDeviceFrame* frame) const {
    frame->black = m_luma[0];
    frame->white = m_luma[255];
    frame->u = m_u;
    frame->v = m_v;
  }

 private:
  std::array<uint8_t, 256> m_luma{};
  uint8_t m_u = 128, m_v = 128;
  bool m_subsampled = false;
  bool m_interleaved = false;  // NV12: one chroma plane of U, V pairs
};

}  // namespace kiln
