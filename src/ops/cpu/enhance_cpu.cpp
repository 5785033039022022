// The enhance family on the CPU: per image, the steps of enhance_px.h in order, each one split over rows on the
// pool (every value is computed by the same expression whatever the split, so results do not depend on threads).
// The unsharp Gaussian runs in fixed point (enhance_blur_loops.h: within one level of the float reference) unless
// the ISA is the scalar reference mode, where the float loops below equal enhance_px.h bit for bit.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "core/cpu_isa.h"
#include "core/thread_pool.h"
#include "ops/enhance.h"

#define KILN_ENHANCE_BLUR_VARIANT generic
#include "ops/cpu/enhance_blur_loops.h"
#undef KILN_ENHANCE_BLUR_VARIANT

namespace kiln {

namespace {

// Integer weights q[0..r] (q[k] for taps r - k and r + k) summing to 2^S exactly, for the largest S <= max_shift
// with every weight <= 32767 (int16 for _mm256_madd_epi16); *err = the bound sum_k |q/2^S - w| * x over x in
// [0, 255]: 255 * max(positive errors, negative errors). False when no S fits.
bool weights_quantize(const float* w, int32_t r, int32_t max_shift, int16_t* q, int32_t* shift, double* err) {
  for (int32_t s = max_shift; s >= 8; --s) {
    const double scale = std::ldexp(1.0, s);
    int64_t total = 0;
    bool fits = true;
    for (int32_t k = 1; k <= r; ++k) {
      const int64_t v = std::llround(static_cast<double>(w[r + k]) * scale);
      fits = fits && v <= 32767;
      q[k] = static_cast<int16_t>(fits ? v : 0);
      total += 2 * v;
    }
    const int64_t centre = (int64_t{1} << s) - total;
    if (!fits || centre < 0 || centre > 32767) continue;
    q[0] = static_cast<int16_t>(centre);
    double pos = 0, neg = 0;
    for (int32_t k = -r; k <= r; ++k) {
      const double e = q[k < 0 ? -k : k] / scale - static_cast<double>(w[r + k]);
      (e > 0 ? pos : neg) += std::fabs(e);
    }
    *shift = s;
    *err = 255.0 * std::max(pos, neg);
    return true;
  }
  return false;
}

}  // namespace

bool enhance_blur_fixed_make(const float* w, int32_t ksize, int32_t percent, int32_t threshold, EnhanceBlurFixed* f,
                             double* bound) {
  *bound = 256.0;
  if (ksize < 1 || ksize > KILN_ENHANCE_MAX_KSIZE || ksize % 2 == 0) return false;
  f->radius = ksize / 2;
  f->percent = percent;
  f->threshold = threshold;
  int32_t sh = 0, sv = 0;
  double err_h = 0, err_v = 0;
  // Horizontal sums <= 255 * 2^Sh; vertical sums <= 16320 * 2^Sv < 2^31.
  if (!weights_quantize(w, f->radius, 22, f->weight_h, &sh, &err_h)) return false;
  if (!weights_quantize(w, f->radius, 17, f->weight_v, &sv, &err_v)) return false;
  f->shift_h = sh - 6;
  f->shift_v = sv + 6;
  // Horizontal weights, the 8.6 rounding (half a step), vertical weights (the vertical weights sum to one, so the
  // horizontal error passes through unchanged), and the float reference's own rounding (two sums of ksize terms
  // of magnitude <= 255, a relative 2^-24 per operation, with room to spare).
  *bound = err_h + 1.0 / 128 + err_v + 3.0 * 255.0 * (ksize + 1) * std::ldexp(1.0, -24);
  return *bound < 1.0;
}

int32_t enhance_unsharp_tolerance(int32_t percent, int32_t threshold) {
  const int64_t step = (static_cast<int64_t>(percent) + 99) / 100;
  const int64_t flip = threshold > 0 ? (static_cast<int64_t>(threshold) + 1) * percent / 100 : 0;
  return static_cast<int32_t>(std::min<int64_t>(255, std::max(step, flip)));
}

namespace {

void rows_for(ThreadPool* pool, int32_t rows, const std::function<void(int32_t, int32_t)>& fn) {
  if (pool == nullptr || rows < 16) {
    fn(0, rows);
    return;
  }
  pool->parallel_for(rows, [&](int64_t begin, int64_t end) { fn(static_cast<int32_t>(begin), static_cast<int32_t>(end)); });
}

KilnImageDesc desc_of(const ImageView& v) {
  KilnImageDesc d{};
  d.width = v.width;
  d.height = v.height;
  d.channels = v.channels;
  d.row_stride = static_cast<int32_t>(v.row_stride);
  d.type = KILN_PIXEL_U8;
  d.layout = KILN_LAYOUT_HWC;
  return d;
}

// A u8 or f32 image: its pixels and its desc (offset 0 from `base`).
struct Plane {
  uint8_t* base = nullptr;
  KilnImageDesc desc{};
};

Plane plane_of(const ImageView& v) { return Plane{static_cast<uint8_t*>(v.data), desc_of(v)}; }

Plane plane_temp(std::vector<uint8_t>& storage, const KilnImageDesc& like, int32_t value_size) {
  Plane p;
  p.desc = like;
  p.desc.row_stride = like.width * like.channels * value_size;
  storage.resize(static_cast<size_t>(p.desc.row_stride) * static_cast<size_t>(like.height));
  p.base = storage.data();
  return p;
}

Plane plane_temp(std::vector<uint8_t>& storage, const ImageView& like, int32_t value_size) {
  return plane_temp(storage, desc_of(like), value_size);
}

uint8_t* row_ptr(const Plane& p, int32_t y) { return p.base + static_cast<int64_t>(y) * p.desc.row_stride; }

bool overlaps(const ImageView& a, const ImageView& b) {
  const auto* a0 = static_cast<const uint8_t*>(a.data);
  const auto* b0 = static_cast<const uint8_t*>(b.data);
  const uint8_t* a1 = a0 + a.row_stride * (a.height - 1) + static_cast<int64_t>(a.width) * a.channels;
  const uint8_t* b1 = b0 + b.row_stride * (b.height - 1) + static_cast<int64_t>(b.width) * b.channels;
  return a0 < b1 && b0 < a1;
}

// PIL contrast's degenerate level: the rounded mean of the gray levels of the image after the table.
int32_t mean_level(const EnhancePlan& plan, const Plane& src, ThreadPool* pool) {
  const KilnImageDesc& d = src.desc;
  std::vector<int64_t> row_sums(static_cast<size_t>(d.height));
  const bool lut = (plan.args.flags & KILN_ENHANCE_LUT) != 0;
  rows_for(pool, d.height, [&](int32_t y0, int32_t y1) {
    for (int32_t y = y0; y < y1; ++y) {
      const uint8_t* row = row_ptr(src, y);
      int64_t sum = 0;
      for (int32_t x = 0; x < d.width; ++x) {
        const uint8_t* px = row + static_cast<int64_t>(x) * d.channels;
        int32_t c[3] = {px[0], d.channels >= 3 ? px[1] : 0, d.channels >= 3 ? px[2] : 0};
        if (lut) {
          for (int32_t& v : c) v = plan.lut[static_cast<size_t>(v)];
        }
        sum += kiln_enhance_gray(plan.args, d.channels, c[0], c[1], c[2]);
      }
      row_sums[static_cast<size_t>(y)] = sum;
    }
  });
  int64_t total = 0;
  for (int64_t s : row_sums) total += s;
  return kiln_enhance_mean_level(total, static_cast<int64_t>(d.width) * d.height);
}

void point_step(const EnhancePlan& plan, const Plane& src, const Plane& dst, int32_t mean, ThreadPool* pool) {
  const KilnImageDesc& d = src.desc;
  // kiln_enhance_point depends only on (channel is alpha, value): tabulate it once per call.
  uint8_t table[256];
  for (int32_t v = 0; v < 256; ++v) table[v] = kiln_enhance_point(plan.args, plan.lut.data(), d.channels, 0, v, mean);
  const int32_t channels = d.channels;
  const int64_t n = static_cast<int64_t>(d.width) * channels;
  rows_for(pool, d.height, [&](int32_t y0, int32_t y1) {
    for (int32_t y = y0; y < y1; ++y) {
      const uint8_t* in = row_ptr(src, y);
      uint8_t* out = row_ptr(dst, y);
      if (channels == 4) {
        for (int64_t i = 0; i < n; i += 4) {
          out[i] = table[in[i]];
          out[i + 1] = table[in[i + 1]];
          out[i + 2] = table[in[i + 2]];
          out[i + 3] = in[i + 3];
        }
      } else {
        for (int64_t i = 0; i < n; ++i) out[i] = table[in[i]];
      }
    }
  });
}

// One row of the SMOOTH + blend of PIL Sharpness, values [i0, i1) of the interior (x in [1, width - 1)).
void sharpness_row(const KilnEnhanceArgs& args, const uint8_t* t, const uint8_t* m, const uint8_t* b, uint8_t* out,
                   int32_t channels, int64_t i0, int64_t i1) {
  const int64_t C = channels;
  const float factor = args.sharpness_factor;
  for (int64_t i = i0; i < i1; ++i) {
    const int32_t degenerate =
        kiln_enhance_smooth(static_cast<float>(t[i - C]), static_cast<float>(t[i]), static_cast<float>(t[i + C]),
                            static_cast<float>(m[i - C]), static_cast<float>(m[i]), static_cast<float>(m[i + C]),
                            static_cast<float>(b[i - C]), static_cast<float>(b[i]), static_cast<float>(b[i + C]));
    out[i] = kiln_enhance_blend(degenerate, m[i], factor);
  }
}

void sharpness_step(const EnhancePlan& plan, const Plane& src, const Plane& dst, ThreadPool* pool) {
  const KilnImageDesc& d = src.desc;
  const int32_t C = d.channels;
  const int64_t n = static_cast<int64_t>(d.width) * C;
  rows_for(pool, d.height, [&](int32_t y0, int32_t y1) {
    for (int32_t y = y0; y < y1; ++y) {
      const uint8_t* m = row_ptr(src, y);
      uint8_t* out = row_ptr(dst, y);
      if (y == 0 || y == d.height - 1 || d.width < 3) {
        if (out != m) std::memmove(out, m, static_cast<size_t>(n));
        continue;
      }
      const uint8_t* t = row_ptr(src, y - 1);
      const uint8_t* b = row_ptr(src, y + 1);
      for (int32_t c = 0; c < C; ++c) out[c] = m[c];
      sharpness_row(plan.args, t, m, b, out, C, C, n - C);
      for (int64_t i = n - C; i < n; ++i) out[i] = m[i];
      if (C == 4) {
        for (int64_t i = 3; i < n; i += 4) out[i] = m[i];
      }
    }
  });
}

// Reflect-101 source indices for taps k of outputs 0..len-1 (only the border parts; the middle is p itself).
std::vector<int32_t> reflect_table(int32_t len, int32_t r) {
  std::vector<int32_t> idx(static_cast<size_t>(len) + 2 * static_cast<size_t>(r));
  for (int64_t j = 0; j < static_cast<int64_t>(idx.size()); ++j) {
    idx[static_cast<size_t>(j)] = kiln_enhance_reflect101(static_cast<int32_t>(j - r), len);
  }
  return idx;
}

constexpr int64_t kChunk = 512;
constexpr int64_t kBlock = 16;

// Horizontal Gaussian pass of rows [y0, y1): out[i] = sum_k w[k] * in[reflect(x - r + k)] (per value, in tap order,
// acc starting at 0.0f exactly as kiln_enhance_blur_row).
void blur_rows(const Plane& src, const Plane& rows, const float* w, int32_t ksize, const std::vector<int32_t>& xidx,
               int32_t y0, int32_t y1) {
  const KilnImageDesc& d = src.desc;
  const int64_t C = d.channels;
  const int32_t r = ksize / 2;
  const int64_t padded = (static_cast<int64_t>(d.width) + 2 * r) * C;
  std::vector<float> pad(static_cast<size_t>(padded));
  const int64_t n = static_cast<int64_t>(d.width) * C;
  for (int32_t y = y0; y < y1; ++y) {
    const uint8_t* in = row_ptr(src, y);
    for (int64_t j = 0; j < d.width + 2 * r; ++j) {
      const uint8_t* px = in + static_cast<int64_t>(xidx[static_cast<size_t>(j)]) * C;
      for (int64_t c = 0; c < C; ++c) pad[static_cast<size_t>(j * C + c)] = static_cast<float>(px[c]);
    }
    auto* out = reinterpret_cast<float*>(row_ptr(rows, y));
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t len = std::min(kChunk, n - i0);
      const float* base = pad.data() + i0;
      int64_t j = 0;
      for (; j + kBlock <= len; j += kBlock) {
        float acc[kBlock];
        for (int64_t b = 0; b < kBlock; ++b) acc[b] = 0.0f;
        for (int32_t k = 0; k < ksize; ++k) {
          const float wk = w[k];
          const float* p = base + j + k * C;
          for (int64_t b = 0; b < kBlock; ++b) acc[b] = acc[b] + wk * p[b];
        }
        for (int64_t b = 0; b < kBlock; ++b) out[i0 + j + b] = acc[b];
      }
      for (; j < len; ++j) {
        float acc = 0.0f;
        for (int32_t k = 0; k < ksize; ++k) acc = acc + w[k] * base[j + k * C];
        out[i0 + j] = acc;
      }
    }
  }
}

// Vertical Gaussian pass of row y over the float rows, in tap order from 0.0f as kiln_enhance_blur_col, into
// acc (values [i0, i0 + len)).
inline void blur_col_chunk(const Plane& rows, const float* w, int32_t ksize, const std::vector<int32_t>& yidx, int32_t y,
                           int64_t i0, int64_t len, float* acc) {
  const float* src[KILN_ENHANCE_MAX_KSIZE];
  for (int32_t k = 0; k < ksize; ++k) {
    src[k] = reinterpret_cast<const float*>(row_ptr(rows, yidx[static_cast<size_t>(y + k)])) + i0;
  }
  int64_t j = 0;
  for (; j + kBlock <= len; j += kBlock) {
    float a[kBlock];
    for (int64_t b = 0; b < kBlock; ++b) a[b] = 0.0f;
    for (int32_t k = 0; k < ksize; ++k) {
      const float wk = w[k];
      const float* p = src[k] + j;
      for (int64_t b = 0; b < kBlock; ++b) a[b] = a[b] + wk * p[b];
    }
    for (int64_t b = 0; b < kBlock; ++b) acc[j + b] = a[b];
  }
  for (; j < len; ++j) {
    float a = 0.0f;
    for (int32_t k = 0; k < ksize; ++k) a = a + w[k] * src[k][j];
    acc[j] = a;
  }
}

// The fixed-point blur (and unsharp rule) of src into dst, in bands of rows on the pool: a band's ring rows cost
// 2r extra horizontal rows, so bands are at least 4 * ksize rows; each call of the pool's takes one contiguous run
// of bands with one ring. Every output value is the same whatever the split.
void blur_fixed_run(const EnhanceBlurFixed& f, const Plane& src, const Plane& dst, bool unsharp, ThreadPool* pool) {
  const KilnImageDesc& d = src.desc;
  if (d.width <= 0 || d.height <= 0) return;
  const int32_t r = f.radius;
  const int32_t taps = 2 * r + 1;
  const auto rows_fn = cpu_isa_active() == CpuIsa::kAvx2 ? avx2::enhance_blur_rows : generic::enhance_blur_rows;
  const std::vector<int32_t> xidx = reflect_table(d.width, r);
  const int64_t n = static_cast<int64_t>(d.width) * d.channels;
  const int32_t workers = pool == nullptr ? 1 : pool->size();
  const int32_t bands = std::max(1, std::min(4 * workers, d.height / std::max(32, 4 * taps)));
  const auto band_row = [&](int64_t band) { return static_cast<int32_t>(band * d.height / bands); };
  const auto run = [&](int64_t begin, int64_t end) {
    thread_local std::vector<int16_t> pad, ring;
    pad.resize(static_cast<size_t>(d.width + 2 * r) * static_cast<size_t>(d.channels));
    ring.resize(static_cast<size_t>(taps) * static_cast<size_t>(n));
    EnhanceBlurRows b;
    b.in = src.base;
    b.out = dst.base;
    b.in_stride = src.desc.row_stride;
    b.out_stride = dst.desc.row_stride;
    b.width = d.width;
    b.height = d.height;
    b.channels = d.channels;
    b.unsharp = unsharp;
    b.xidx = xidx.data();
    b.pad = pad.data();
    b.ring = ring.data();
    rows_fn(f, b, band_row(begin), band_row(end));
  };
  parallel_for(pool, bands, run);
}

// The fixed-point kernel for `w` when the fast path runs (not the scalar reference mode, bound below one level).
bool blur_fixed_use(const float* w, int32_t ksize, int32_t percent, int32_t threshold, EnhanceBlurFixed* f) {
  if (cpu_isa_active() == CpuIsa::kScalar) return false;
  double bound = 0;
  return enhance_blur_fixed_make(w, ksize, percent, threshold, f, &bound);
}

void unsharp_step(const EnhancePlan& plan, const Plane& src, std::vector<uint8_t>& temp_rows, const Plane& dst,
                  ThreadPool* pool) {
  const KilnImageDesc& d = src.desc;
  const int32_t ksize = plan.args.ksize;
  const int32_t r = ksize / 2;
  const float* w = plan.weights.data();
  const int32_t percent = plan.args.percent;
  const int32_t threshold = plan.args.threshold;
  EnhanceBlurFixed fixed;
  if (blur_fixed_use(w, ksize, percent, threshold, &fixed)) {
    blur_fixed_run(fixed, src, dst, true, pool);
    return;
  }
  const std::vector<int32_t> xidx = reflect_table(d.width, r);
  const std::vector<int32_t> yidx = reflect_table(d.height, r);
  const int64_t n = static_cast<int64_t>(d.width) * d.channels;
  const Plane rows = plane_temp(temp_rows, d, 4);
  rows_for(pool, d.height, [&](int32_t y0, int32_t y1) { blur_rows(src, rows, w, ksize, xidx, y0, y1); });
  rows_for(pool, d.height, [&](int32_t y0, int32_t y1) {
    float acc[kChunk];
    for (int32_t y = y0; y < y1; ++y) {
      const uint8_t* in = row_ptr(src, y);
      uint8_t* out = row_ptr(dst, y);
      for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
        const int64_t len = std::min(kChunk, n - i0);
        blur_col_chunk(rows, w, ksize, yidx, y, i0, len, acc);
        for (int64_t j = 0; j < len; ++j) {
          const int32_t blurred = static_cast<int32_t>(kiln_u8_from_float(acc[j]));
          out[i0 + j] = kiln_enhance_unsharp(in[i0 + j], blurred, percent, threshold);
        }
      }
    }
  });
}

void copy_image(const Plane& src, const Plane& dst) {
  const size_t bytes = static_cast<size_t>(src.desc.width) * static_cast<size_t>(src.desc.channels);
  for (int32_t y = 0; y < src.desc.height; ++y) {
    if (row_ptr(src, y) != row_ptr(dst, y)) std::memmove(row_ptr(dst, y), row_ptr(src, y), bytes);
  }
}

}  // namespace

Status enhance_gaussian_blur_cpu(const ImageView& in, const ImageView& out, float sigma) {
  if (in.type != PixelType::kU8 || out.type != PixelType::kU8 || in.layout != Layout::kHWC ||
      out.layout != Layout::kHWC || in.width != out.width || in.height != out.height || in.channels != out.channels ||
      !(sigma > 0.0f) || sigma > kEnhanceMaxRadius) {
    return invalid_argument("enhance_gaussian_blur_cpu: bad images or sigma");
  }
  const std::vector<float> w = enhance_gaussian_weights(sigma);
  const int32_t ksize = static_cast<int32_t>(w.size());
  Plane src = plane_of(in);
  const Plane dst = plane_of(out);
  std::vector<uint8_t> storage;
  EnhanceBlurFixed fixed;
  if (blur_fixed_use(w.data(), ksize, 0, 0, &fixed)) {
    if (overlaps(in, out)) {  // the bands read rows that earlier output rows would already have overwritten
      const Plane copy = plane_temp(storage, in, 1);
      copy_image(src, copy);
      src = copy;
    }
    blur_fixed_run(fixed, src, dst, false, nullptr);
    return Status::ok();
  }
  const Plane rows = plane_temp(storage, in, 4);
  const KilnImageDesc& d = src.desc;
  const int32_t r = ksize / 2;
  const std::vector<int32_t> xidx = reflect_table(d.width, r);
  const std::vector<int32_t> yidx = reflect_table(d.height, r);
  blur_rows(src, rows, w.data(), ksize, xidx, 0, d.height);
  const int64_t n = static_cast<int64_t>(d.width) * d.channels;
  float acc[kChunk];
  for (int32_t y = 0; y < d.height; ++y) {
    uint8_t* o = row_ptr(dst, y);
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t len = std::min(kChunk, n - i0);
      blur_col_chunk(rows, w.data(), ksize, yidx, y, i0, len, acc);
      for (int64_t j = 0; j < len; ++j) o[i0 + j] = kiln_u8_from_float(acc[j]);
    }
  }
  return Status::ok();
}

Status enhance_cpu(const OpCall& call, ThreadPool* pool) {
  const EnhancePlan plan = enhance_plan(*static_cast<const EnhanceParams*>(call.params));
  const int32_t flags = plan.args.flags;
  const bool point = (flags & (KILN_ENHANCE_LUT | KILN_ENHANCE_CONTRAST)) != 0;
  const bool sharp = (flags & KILN_ENHANCE_SHARPNESS) != 0;
  const bool unsharp = (flags & KILN_ENHANCE_UNSHARP) != 0;
  std::vector<uint8_t> temp_a, temp_b, temp_rows;
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out_view = call.out[i];
    if (in.row_stride > INT32_MAX || out_view.row_stride > INT32_MAX)
      return invalid_argument("enhance: row stride too large");
    const Plane out = plane_of(out_view);
    Plane cur = plane_of(in);
    if (!point && !sharp && !unsharp) {
      copy_image(cur, out);
      continue;
    }
    if (point) {
      const int32_t mean = (flags & KILN_ENHANCE_CONTRAST) != 0 ? mean_level(plan, cur, pool) : 0;
      const Plane dst = (sharp || unsharp) ? plane_temp(temp_a, in, 1) : out;
      point_step(plan, cur, dst, mean, pool);
      cur = dst;
    } else if (overlaps(in, out_view)) {
      // The neighbourhood steps read pixels the output would already have overwritten.
      const Plane copy = plane_temp(temp_a, in, 1);
      copy_image(cur, copy);
      cur = copy;
    }
    if (sharp) {
      const Plane dst = unsharp ? plane_temp(temp_b, in, 1) : out;
      sharpness_step(plan, cur, dst, pool);
      cur = dst;
    }
    if (unsharp) unsharp_step(plan, cur, temp_rows, out, pool);
  }
  return Status::ok();
}

}  // namespace kiln
