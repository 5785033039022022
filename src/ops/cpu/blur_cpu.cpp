// The blur family on the CPU: the reference implementation. Per image: the small image by block sums (rows on the
// pool), each box pass as running sums (a horizontal one per row, a vertical one down all columns at once), then
// the enlargement through per-axis tap tables (rows on the pool). Running sums add and drop the clamped samples a
// window gains and loses, so every sum is blur_px.h's direct one and the bytes equal kiln_blur_*_px's.
#include <algorithm>
#include <functional>
#include <vector>

#include "core/thread_pool.h"
#include "ops/blur.h"
#include "ops/matte.h"

namespace kiln {

namespace {

void rows_run(ThreadPool* pool, int32_t rows, const std::function<void(int64_t, int64_t)>& body) {
  if (pool != nullptr) {
    pool->parallel_for(rows, body);
  } else {
    body(0, rows);
  }
}

// A packed small image (u8, `channels` interleaved).
struct Small {
  int32_t width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;
  uint8_t* row(int32_t y) { return pixels.data() + static_cast<size_t>(y) * width * channels; }
};

void shrink(const ImageView& in, int32_t factor, Small* s, ThreadPool* pool) {
  const int32_t ch = in.channels, f = factor;
  const int32_t half = f * f / 2, area = f * f;
  rows_run(pool, s->height, [&](int64_t begin, int64_t end) {
    std::vector<int32_t> acc(static_cast<size_t>(s->width) * ch);
    for (auto sy = static_cast<int32_t>(begin); sy < end; ++sy) {
      std::fill(acc.begin(), acc.end(), 0);
      for (int32_t dy = 0; dy < f; ++dy) {
        const uint8_t* p = in.row<uint8_t>(std::min(sy * f + dy, in.height - 1));
        for (int32_t sx = 0; sx < s->width; ++sx) {
          for (int32_t dx = 0; dx < f; ++dx) {
            const uint8_t* px = p + static_cast<size_t>(std::min(sx * f + dx, in.width - 1)) * ch;
            for (int32_t c = 0; c < ch; ++c) acc[static_cast<size_t>(sx) * ch + c] += px[c];
          }
        }
      }
      uint8_t* out = s->row(sy);
      for (size_t k = 0; k < acc.size(); ++k) out[k] = static_cast<uint8_t>((acc[k] + half) / area);
    }
  });
}

// One horizontal box over every row of `s`, through `tmp`.
void box_horizontal(Small* s, const KilnBlurArgs& a, std::vector<uint8_t>* tmp) {
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
void box_vertical(Small* s, const KilnBlurArgs& a, const std::vector<uint8_t>& tmp) {
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

void enlarge(const Small& s, const ImageView& out, ThreadPool* pool) {
  const int32_t ch = s.channels;
  const MatteTaps tx = matte_taps_make(out.width, 0.0f, static_cast<float>(s.width), s.width);
  const MatteTaps ty = matte_taps_make(out.height, 0.0f, static_cast<float>(s.height), s.height);
  const size_t stride = static_cast<size_t>(s.width) * ch;
  rows_run(pool, out.height, [&](int64_t begin, int64_t end) {
    for (auto y = static_cast<int32_t>(begin); y < end; ++y) {
      const uint8_t* r0 = s.pixels.data() + static_cast<size_t>(ty.i0[y]) * stride;
      const uint8_t* r1 = s.pixels.data() + static_cast<size_t>(ty.i1[y]) * stride;
      const float wy = ty.w[y];
      uint8_t* dst = out.row<uint8_t>(y);
      for (int32_t x = 0; x < out.width; ++x) {
        const int32_t a = tx.i0[x] * ch, b = tx.i1[x] * ch;
        for (int32_t c = 0; c < ch; ++c) {
          dst[x * ch + c] = kiln_blur_enlarge_level(r0[a + c], r0[b + c], r1[a + c], r1[b + c], tx.w[x], wy);
        }
      }
    }
  });
}

}  // namespace

Status blur_cpu(const OpCall& call, ThreadPool* pool) {
  if (call.in.space != MemorySpace::kHost || call.out.space != MemorySpace::kHost) {
    return invalid_argument("blur: the CPU takes host batches only");
  }
  const auto& params = *static_cast<const BlurParams*>(call.params);
  const KilnBlurArgs a = blur_args_resolve(params);
  Small s;
  std::vector<uint8_t> tmp;
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    s.width = kiln_blur_small_size(in.width, a.factor);
    s.height = kiln_blur_small_size(in.height, a.factor);
    s.channels = in.channels;
    s.pixels.resize(static_cast<size_t>(s.width) * s.height * s.channels);
    shrink(in, a.factor, &s, pool);
    for (int32_t pass = 0; pass < params.passes; ++pass) {
      box_horizontal(&s, a, &tmp);
      box_vertical(&s, a, tmp);
    }
    enlarge(s, call.out[i], pool);
  }
  return Status::ok();
}

}  // namespace kiln
