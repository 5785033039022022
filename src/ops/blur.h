// The blur family, internal side: validation, the kernels' parameters, the small images' shapes and the CPU
// implementation (params in include/kiln/ops/blur.h, per-pixel math in blur_px.h).
#pragma once

#include <vector>

#include "kiln/ops.h"
#include "kiln/ops/blur.h"
#include "ops/blur_px.h"
#include "ops/matte.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for blur.
Status blur_validate(const OpCall& call);
// The kernels' parameters of validated params.
KilnBlurArgs blur_args_resolve(const BlurParams& params);
// Packed u8 views of the shrunk sizes of `in`'s images (for a backend's temporaries; their pixels point at the
// inputs' and are not read).
std::vector<ImageView> blur_small_shapes(const VarShapeBatchView& in, int32_t factor);
// The CPU implementation (the reference every other backend is compared with).
Status blur_cpu(const OpCall& call, ThreadPool* pool);

// The CPU's blur of one image (u8 HWC, host memory) handed out row by row: the small image and its box passes are
// made at construction (rows on `pool` when given), the output rows by a Cursor, so a caller can blend a row as it
// is made (kiln segment's blurred background) instead of writing the whole blurred image first. blur_cpu's bytes.
class BlurRows {
 public:
  BlurRows(const ImageView& in, const BlurParams& params, ThreadPool* pool);

  // Output rows for one thread, best in increasing order: each small row is widened (blended horizontally to the
  // full width, in float) when a row first needs it, and the two an output row blends are kept for the next.
  class Cursor {
   public:
    explicit Cursor(const BlurRows& blur);
    // Row y (0 <= y < in.height) of the blurred image: in.width * in.channels bytes into `out`.
    void row(int32_t y, uint8_t* out);

   private:
    const float* widened(int32_t k, int32_t keep);  // small row k widened, not evicting small row `keep`
    const BlurRows& m_blur;
    int32_t m_rows[2] = {-1, -1};  // the small rows m_wide holds
    std::vector<float> m_wide[2];
  };

  struct Small {  // a packed small image (u8, `channels` interleaved)
    int32_t width = 0, height = 0, channels = 0;
    std::vector<uint8_t> pixels;
    const uint8_t* row(int32_t y) const { return pixels.data() + static_cast<size_t>(y) * width * channels; }
    uint8_t* row(int32_t y) { return pixels.data() + static_cast<size_t>(y) * width * channels; }
  };

 private:
  Small m_small;
  MatteTaps m_x, m_y;  // the enlargement's taps per output column and row
};

}  // namespace kiln
