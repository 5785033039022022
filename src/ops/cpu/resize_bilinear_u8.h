// The fast CPU path of two-tap resizes (bilinear; area when upscaling) of u8 HWC images with 3 or 4 channels,
// used by resize and preprocess outside the reference mode: the horizontal pass first, on each source row an
// output row needs (a row is reused by the next output row when they share it), in fixed point (11-bit weights,
// AVX2 pshufb and pmaddwd); then the vertical pass in float with the plan's own weights.
//
// Tolerance against the reference (resize_px.h, float, vertical pass first): the 11-bit horizontal weights move a
// value by at most 255 / 4096 < 0.07 levels, so a u8 output differs by at most 1 level (only where the exact value
// lies within 0.07 of a rounding boundary), and a preprocess output by at most 0.07 levels * scale / std (plus
// float rounding). OpenCV's u8 resize (8-bit weights in both passes) is within 1 level of either.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/resize.h"

namespace kiln {

// A horizontal row holds 4 floats per output pixel (the 3-channel case pads) in blocks of 8 pixels, in the order
// the AVX2 pass produces them (pixels 0|4, 1|5, 2|6, 3|7 per register half); the last block is padded.
struct BilinearU8Tables {
  int32_t channels = 0;
  int32_t width = 0;          // output pixels per row (plan.dst.width)
  int32_t blocks = 0;         // ceil(width / 8)
  int32_t direct_blocks = 0;  // blocks read from the source row; the rest from a copy of the row's end
  int64_t row_bytes = 0;      // of the source row
  int64_t tail_base = 0;      // where that copy starts in the row (it runs to the row's end, then 16 zero bytes)
  std::vector<int32_t> offset;         // per padded pixel: byte offset of its first tap (in the row, or the copy)
  std::vector<int16_t> block_weights;  // per block: 4 registers of (w0, w1) * 2048 pairs laid out for pmaddwd
  int64_t row_floats() const { return static_cast<int64_t>(blocks) * 32; }
};

// Whether the fast path can take this resize: AVX2 active, u8 HWC with 3 or 4 channels, two taps on both axes,
// horizontally neighbours with weights in [0, 1].
bool bilinear_u8_usable(const ResizePlan& plan, const ImageView& src, int32_t channels);
BilinearU8Tables bilinear_u8_tables(const ResizePlan& plan, int32_t channels, int32_t src_width);

// Per-thread state: two horizontal rows, each remembered by its source row.
class BilinearU8Rows {
 public:
  explicit BilinearU8Rows(const BilinearU8Tables& tables);
  // The horizontal rows of output row ty (relative to plan.dst) and their vertical weights.
  void rows_for(const ImageView& src, const ResizePlan& plan, int32_t ty, const float** h0, const float** h1,
                float* b0, float* b1);

 private:
  const float* row_get(const ImageView& src, int32_t source_row, int32_t keep_row);

  const BilinearU8Tables& m_tables;
  std::vector<uint8_t> m_tail;
  std::vector<float> m_rows[2];
  int32_t m_source_row[2] = {-1, -1};
};

// Normalization of one source channel in preprocess: out = v * mul + add, into planes[c] (float rows).
struct BilinearPlanes {
  float* planes[4] = {};
  float mul[4] = {};
  float add[4] = {};
};

namespace avx2 {
// tail: row_bytes - tail_base + 16 bytes of scratch, the last 16 zero.
void bilinear_u8_hrow(const uint8_t* src_row, const BilinearU8Tables& t, uint8_t* tail, float* out);
// One u8 output row (t.width pixels of t.channels values) from two horizontal rows.
void bilinear_u8_vrow(const float* h0, const float* h1, float b0, float b1, const BilinearU8Tables& t, uint8_t* out);
// One row of t.channels normalized float planes (values clamped to [0, 255] before normalizing).
void bilinear_u8_vrow_planes(const float* h0, const float* h1, float b0, float b1, const BilinearU8Tables& t,
                             const BilinearPlanes& p);
}  // namespace avx2

}  // namespace kiln
