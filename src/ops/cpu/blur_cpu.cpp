// The blur family on the CPU: the reference implementation (BlurRows, ops/blur.h). Per image: the small image by
// block sums (the f rows of a block added column-wise first, vectorized, then f columns per pixel; small rows on the
// pool), each box pass as running sums (a horizontal one per row, a vertical one down all columns at once), then
// the enlargement: a small row's horizontal blend to the full width when an output row first needs it (float,
// blur_px.h's first step; kept while the next rows need it), and each output row the vertical blend of its two
// (vectorized; rows on the pool). The two full-width loops have an AVX2 variant (blur_loops.h). Integer sums in any order are the same
// sums, the running sums add and drop the clamped samples a window gains and loses, and the float steps are
// kiln_blur_enlarge_level's in its order, so the bytes equal kiln_blur_*_px's.
#include <algorithm>
#include <functional>
#include <vector>

#include "core/cpu_isa.h"
#include "core/thread_pool.h"
#include "ops/blur.h"
#include "ops/matte.h"

#define KILN_BLUR_VARIANT generic
#include "ops/cpu/blur_loops.h"
#undef KILN_BLUR_VARIANT

namespace kiln {

namespace {

bool blur_avx2() { return cpu_isa_active() == CpuIsa::kAvx2; }

// Small rows [begin, end) of `s`: each pixel the rounded mean of its block (a constant channel count lets the
// compiler keep the sums in registers).
template <int32_t kChannels>
void shrink_rows(const ImageView& in, int32_t f, BlurRows::Small* s, int32_t begin, int32_t end) {
  const int32_t half = f * f / 2, area = f * f;
  const size_t values = static_cast<size_t>(in.width) * kChannels;
  std::vector<int32_t> columns(values);  // the block rows' sums per input value
  const auto columns_add = blur_avx2() ? avx2::blur_columns_add : generic::blur_columns_add;
  for (int32_t sy = begin; sy < end; ++sy) {
    std::fill(columns.begin(), columns.end(), 0);
    for (int32_t dy = 0; dy < f; ++dy) {
      columns_add(in.row<uint8_t>(std::min(sy * f + dy, in.height - 1)), columns.data(), values);
    }
    uint8_t* out = s->row(sy);
    for (int32_t sx = 0; sx < s->width; ++sx) {
      int32_t sum[kChannels] = {};
      for (int32_t dx = 0; dx < f; ++dx) {
        const int32_t* col = columns.data() + static_cast<size_t>(std::min(sx * f + dx, in.width - 1)) * kChannels;
        for (int32_t c = 0; c < kChannels; ++c) sum[c] += col[c];
      }
      for (int32_t c = 0; c < kChannels; ++c) out[sx * kChannels + c] = static_cast<uint8_t>((sum[c] + half) / area);
    }
  }
}

void shrink(const ImageView& in, int32_t factor, BlurRows::Small* s, ThreadPool* pool) {
  parallel_for(pool, s->height, [&](int64_t begin, int64_t end) {
    const auto b = static_cast<int32_t>(begin), e = static_cast<int32_t>(end);
    switch (in.channels) {
      case 1: return shrink_rows<1>(in, factor, s, b, e);
      case 3: return shrink_rows<3>(in, factor, s, b, e);
      default: return shrink_rows<4>(in, factor, s, b, e);
    }
  });
}

// One horizontal box over every row of `s`, through `tmp`.
void box_horizontal(BlurRows::Small* s, const KilnBlurArgs& a, std::vector<uint8_t>* tmp) {
  const int32_t w = s->width, ch = s->channels, r = a.radius;
  tmp->resize(s->pixels.size());
  for (int32_t y = 0; y < s->height; ++y) {
    const uint8_t* row = s->row(y);
    uint8_t* out = tmp->data() + static_cast<size_t>(y) * w * ch;
    for (int32_t c = 0; c < ch; ++c) {
      int32_t sum = 0;
      for (int32_t k = -r; k <= r; ++k) sum += row[std::clamp(k, 0, w - 1) * ch + c];
      for (int32_t x = 0; x < w; ++x) {
        out[x * ch + c] = kiln_blur_box_level(sum, a.norm);
        sum += row[std::min(x + r + 1, w - 1) * ch + c] - row[std::max(x - r, 0) * ch + c];
      }
    }
  }
}

// One vertical box from `tmp` back into `s`: running sums of every column at once, row by row.
void box_vertical(BlurRows::Small* s, const KilnBlurArgs& a, const std::vector<uint8_t>& tmp) {
  const int32_t h = s->height, r = a.radius;
  const size_t stride = static_cast<size_t>(s->width) * s->channels;
  const auto at = [&](int32_t y) { return tmp.data() + static_cast<size_t>(y) * stride; };
  std::vector<int32_t> sums(stride, 0);
  for (int32_t k = -r; k <= r; ++k) {
    const uint8_t* row = at(std::clamp(k, 0, h - 1));
    for (size_t x = 0; x < stride; ++x) sums[x] += row[x];
  }
  for (int32_t y = 0; y < h; ++y) {
    uint8_t* out = s->row(y);
    for (size_t x = 0; x < stride; ++x) out[x] = kiln_blur_box_level(sums[x], a.norm);
    const uint8_t* gained = at(std::min(y + r + 1, h - 1));
    const uint8_t* lost = at(std::max(y - r, 0));
    for (size_t x = 0; x < stride; ++x) sums[x] += gained[x] - lost[x];
  }
}

// Small row `r` blended horizontally to the full width (blur_px.h's first enlargement step) into `out`.
template <int32_t kChannels>
void widen_row(const MatteTaps& tx, const uint8_t* r, float* out) {
  const auto width = static_cast<int32_t>(tx.w.size());
  for (int32_t x = 0; x < width; ++x) {
    const int32_t a = tx.i0[x] * kChannels, b = tx.i1[x] * kChannels;
    const float wx = tx.w[x];
    for (int32_t c = 0; c < kChannels; ++c) {
      out[x * kChannels + c] = static_cast<float>(r[a + c]) + static_cast<float>(r[b + c] - r[a + c]) * wx;
    }
  }
}

}  // namespace

BlurRows::BlurRows(const ImageView& in, const BlurParams& params, ThreadPool* pool) {
  const KilnBlurArgs a = blur_args_resolve(params);
  m_small.width = kiln_blur_small_size(in.width, a.factor);
  m_small.height = kiln_blur_small_size(in.height, a.factor);
  m_small.channels = in.channels;
  m_small.pixels.resize(static_cast<size_t>(m_small.width) * m_small.height * m_small.channels);
  shrink(in, a.factor, &m_small, pool);
  std::vector<uint8_t> tmp;
  for (int32_t pass = 0; pass < params.passes; ++pass) {
    box_horizontal(&m_small, a, &tmp);
    box_vertical(&m_small, a, tmp);
  }
  m_x = matte_taps_make(in.width, 0.0f, static_cast<float>(m_small.width), m_small.width);
  m_y = matte_taps_make(in.height, 0.0f, static_cast<float>(m_small.height), m_small.height);
}

BlurRows::Cursor::Cursor(const BlurRows& blur) : m_blur(blur) {
  for (std::vector<float>& wide : m_wide) wide.resize(blur.m_x.w.size() * static_cast<size_t>(blur.m_small.channels));
}

const float* BlurRows::Cursor::widened(int32_t k, int32_t keep) {
  for (int s = 0; s < 2; ++s) {
    if (m_rows[s] == k) return m_wide[s].data();
  }
  const int s = m_rows[0] == keep ? 1 : 0;
  m_rows[s] = k;
  float* out = m_wide[s].data();
  switch (m_blur.m_small.channels) {  // a constant channel count lets the compiler unroll the pixel
    case 1: widen_row<1>(m_blur.m_x, m_blur.m_small.row(k), out); break;
    case 3: widen_row<3>(m_blur.m_x, m_blur.m_small.row(k), out); break;
    default: widen_row<4>(m_blur.m_x, m_blur.m_small.row(k), out); break;
  }
  return out;
}

void BlurRows::Cursor::row(int32_t y, uint8_t* out) {
  const int32_t k0 = m_blur.m_y.i0[y], k1 = m_blur.m_y.i1[y];
  const float* top = widened(k0, k1);
  const float* bottom = widened(k1, k0);
  const auto blend = blur_avx2() ? avx2::blur_rows_blend : generic::blur_rows_blend;
  blend(top, bottom, m_blur.m_y.w[y], out, m_wide[0].size());
}

Status blur_cpu(const OpCall& call, ThreadPool* pool) {
  if (call.in.space != MemorySpace::kHost || call.out.space != MemorySpace::kHost) {
    return invalid_argument("blur: the CPU takes host batches only");
  }
  const auto& params = *static_cast<const BlurParams*>(call.params);
  for (int64_t i = 0; i < call.in.count; ++i) {
    const BlurRows blurred(call.in[i], params, pool);  // reads the whole input before the output is written
    const ImageView& out = call.out[i];
    parallel_for(pool, out.height, [&](int64_t begin, int64_t end) {
      BlurRows::Cursor rows(blurred);
      for (auto y = static_cast<int32_t>(begin); y < end; ++y) rows.row(y, out.row<uint8_t>(y));
    });
  }
  return Status::ok();
}

}  // namespace kiln
