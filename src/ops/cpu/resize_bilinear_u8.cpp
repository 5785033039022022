// Tables and the per-thread row cache of the fast two-tap u8 resize (resize_bilinear_u8.h); the pixel loops are in
// resize_bilinear_u8_avx2.cpp.
#include "ops/cpu/resize_bilinear_u8.h"

#include <algorithm>
#include <cmath>

#include "core/cpu_isa.h"

namespace kiln {

namespace {

constexpr float kWeightScale = 2048.0f;

bool weights_in_unit_range(const std::vector<float>& weights) {
  for (float w : weights) {
    if (!(w >= 0.0f && w <= 1.0f)) return false;
  }
  return true;
}

// Both taps of every pixel are neighbours (or the same pixel, at the clamped border).
bool taps_adjacent(const ResizeAxis& axis) {
  for (size_t i = 0; i + 1 < axis.index.size(); i += 2) {
    const int32_t step = axis.index[i + 1] - axis.index[i];
    if (step != 0 && step != 1) return false;
  }
  return true;
}

}  // namespace

bool bilinear_u8_usable(const ResizePlan& plan, const ImageView& src, int32_t channels) {
  return cpu_isa_active() == CpuIsa::kAvx2 && src.type == PixelType::kU8 && src.layout == Layout::kHWC &&
         (channels == 3 || channels == 4) && plan.x.taps == 2 && plan.y.taps == 2 && plan.dst.width > 0 &&
         static_cast<int64_t>(src.width) * channels < (int64_t{1} << 30) && weights_in_unit_range(plan.x.weight) &&
         taps_adjacent(plan.x);
}

BilinearU8Tables bilinear_u8_tables(const ResizePlan& plan, int32_t channels, int32_t src_width) {
  BilinearU8Tables t;
  t.channels = channels;
  t.width = plan.dst.width;
  t.blocks = (t.width + 7) / 8;
  t.row_bytes = static_cast<int64_t>(src_width) * channels;
  const auto padded = static_cast<size_t>(t.blocks) * 8;
  t.offset.resize(padded);
  std::vector<int16_t> w0s(padded);
  std::vector<int16_t> w1s(padded);
  t.direct_blocks = t.blocks;
  for (size_t i = 0; i < padded; ++i) {
    const size_t px = std::min(i, static_cast<size_t>(t.width) - 1);  // padding repeats the last pixel
    const int32_t i0 = plan.x.index[2 * px];
    const int32_t i1 = plan.x.index[2 * px + 1];
    const int64_t offset = static_cast<int64_t>(i0) * channels;
    // Weights that sum to 1 keep that sum, so the rounding error of a value is e * (p0 - p1), |e| <= 1/4096.
    const float w0 = plan.x.weight[2 * px];
    const float w1 = plan.x.weight[2 * px + 1];
    int32_t q0 = static_cast<int32_t>(std::lround(w0 * kWeightScale));
    int32_t q1 = std::fabs(w0 + w1 - 1.0f) < 1e-6f ? 2048 - q0 : static_cast<int32_t>(std::lround(w1 * kWeightScale));
    if (i1 == i0) q0 += q1, q1 = 0;  // one pixel twice (the border): the neighbour's bytes count zero times
    w0s[i] = static_cast<int16_t>(q0);
    w1s[i] = static_cast<int16_t>(q1);
    // 16 bytes are read from the first tap: near the row's end from the copy of its last 16 bytes instead.
    if (offset + 16 > t.row_bytes) t.direct_blocks = std::min(t.direct_blocks, static_cast<int32_t>(i / 8));
    t.offset[i] = static_cast<int32_t>(offset);
  }
  const auto first_copied = static_cast<size_t>(t.direct_blocks) * 8;
  t.tail_base = first_copied < padded
                    ? std::min<int64_t>(t.offset[first_copied], std::max<int64_t>(0, t.row_bytes - 16))
                    : t.row_bytes;
  for (size_t i = first_copied; i < padded; ++i) {
    t.offset[i] = static_cast<int32_t>(t.offset[i] - t.tail_base);
  }
  // Block b, register j: pixel 8b + j in the low half, 8b + j + 4 in the high half, (w0, w1) once per channel.
  t.block_weights.resize(padded * 8);
  for (size_t b = 0; b < static_cast<size_t>(t.blocks); ++b) {
    for (size_t j = 0; j < 4; ++j) {
      for (size_t half = 0; half < 2; ++half) {
        const size_t px = 8 * b + j + 4 * half;
        int16_t* w = t.block_weights.data() + b * 64 + j * 16 + half * 8;
        for (int32_t c = 0; c < 4; ++c) {
          w[2 * c] = w0s[px];
          w[2 * c + 1] = w1s[px];
        }
      }
    }
  }
  return t;
}

BilinearU8Rows::BilinearU8Rows(const BilinearU8Tables& tables)
    : m_tables(tables), m_tail(static_cast<size_t>(tables.row_bytes - tables.tail_base) + 16, 0) {
  for (auto& row : m_rows) row.assign(static_cast<size_t>(tables.row_floats()), 0.0f);
}

const float* BilinearU8Rows::row_get(const ImageView& src, int32_t source_row, int32_t keep_row) {
  for (int32_t s = 0; s < 2; ++s) {
    if (m_source_row[s] == source_row) return m_rows[s].data();
  }
  const int32_t s = m_source_row[0] == keep_row ? 1 : 0;
  m_source_row[s] = source_row;
  avx2::bilinear_u8_hrow(src.row<const uint8_t>(source_row), m_tables, m_tail.data(), m_rows[s].data());
  return m_rows[s].data();
}

void BilinearU8Rows::rows_for(const ImageView& src, const ResizePlan& plan, int32_t ty, const float** h0,
                              const float** h1, float* b0, float* b1) {
  const auto j = static_cast<size_t>(ty) * 2;
  const int32_t r0 = plan.y.index[j];
  const int32_t r1 = plan.y.index[j + 1];
  *h0 = row_get(src, r0, r1);
  *h1 = row_get(src, r1, r0);
  *b0 = plan.y.weight[j];
  *b1 = plan.y.weight[j + 1];
}

}  // namespace kiln
