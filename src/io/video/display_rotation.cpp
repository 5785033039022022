#include "io/video/display_rotation.h"

#include <cmath>
#include <cstring>

extern "C" {
#include <libavutil/display.h>
}

namespace kiln {

int32_t display_rotation_clockwise(const AVStream* stream) {
  size_t size = 0;
  const uint8_t* matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
  if (matrix == nullptr || size < 9 * sizeof(int32_t)) return 0;
  int32_t m[9];
  std::memcpy(m, matrix, sizeof m);
  // A mirror has a negative determinant: not a turn.
  if (static_cast<int64_t>(m[0]) * m[4] - static_cast<int64_t>(m[1]) * m[3] < 0) return 0;
  const double counterclockwise = av_display_rotation_get(m);
  if (std::isnan(counterclockwise)) return 0;
  const auto degrees = static_cast<int32_t>(std::lround(-counterclockwise));
  const int32_t clockwise = ((degrees % 360) + 360) % 360;
  return clockwise % 90 == 0 ? clockwise : 0;
}

void rgb_turn(const ImageBuffer& coded, int32_t clockwise, ImageBuffer* out) {
  const int32_t w = coded.width, h = coded.height;
  const bool quarter = clockwise == 90 || clockwise == 270;
  out->width = quarter ? h : w;
  out->height = quarter ? w : h;
  out->channels = 3;
  out->pixels.resize(static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
  for (int32_t y = 0; y < out->height; ++y) {
    uint8_t* row = out->pixels.data() + static_cast<size_t>(y) * static_cast<size_t>(out->width) * 3;
    for (int32_t x = 0; x < out->width; ++x) {
      // The coded pixel that lands at (x, y) of the turned picture.
      const int32_t cx = clockwise == 90 ? y : clockwise == 180 ? w - 1 - x : clockwise == 270 ? w - 1 - y : x;
      const int32_t cy = clockwise == 90 ? h - 1 - x : clockwise == 180 ? h - 1 - y : clockwise == 270 ? x : y;
      std::memcpy(row + static_cast<size_t>(x) * 3,
                  coded.pixels.data() + (static_cast<size_t>(cy) * static_cast<size_t>(w) + cx) * 3, 3);
    }
  }
}

}  // namespace kiln
