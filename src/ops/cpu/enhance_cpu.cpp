// The enhance family on the CPU: per image, the steps of enhance_px.h in order, each one split over rows on the
// pool (every value is computed by the same expression whatever the split, so results do not depend on threads).
#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "core/thread_pool.h"
#include "ops/enhance.h"

namespace kiln {

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

Plane plane_temp(std::vector<uint8_t>& storage, const ImageView& like, int32_t value_size) {
  Plane p;
  p.desc = desc_of(like);
  p.desc.row_stride = like.width * like.channels * value_size;
  storage.resize(static_cast<size_t>(p.desc.row_stride) * static_cast<size_t>(like.height));
  p.base = storage.data();
  return p;
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
  rows_for(pool, d.height, [&](int32_t y0, int32_t y1) {
    for (int32_t y = y0; y < y1; ++y) {
      const uint8_t* in = row_ptr(src, y);
      uint8_t* out = row_ptr(dst, y);
      for (int32_t x = 0; x < d.width; ++x) {
        for (int32_t c = 0; c < d.channels; ++c) {
          const int64_t at = static_cast<int64_t>(x) * d.channels + c;
          out[at] = kiln_enhance_point(plan.args, plan.lut.data(), d.channels, c, in[at], mean);
        }
      }
    }
  });
}

void sharpness_step(const EnhancePlan& plan, const Plane& src, const Plane& dst, ThreadPool* pool) {
  const KilnImageDesc& d = src.desc;
  rows_for(pool, d.height, [&](int32_t y0, int32_t y1) {
    for (int32_t y = y0; y < y1; ++y) {
      uint8_t* out = row_ptr(dst, y);
      for (int32_t x = 0; x < d.width; ++x) {
        for (int32_t c = 0; c < d.channels; ++c) {
          out[static_cast<int64_t>(x) * d.channels + c] = kiln_enhance_sharpness(plan.args, src.base, d, x, y, c);
        }
      }
    }
  });
}

void unsharp_step(const EnhancePlan& plan, const Plane& src, const Plane& rows, const Plane& dst, ThreadPool* pool) {
  const KilnImageDesc& d = src.desc;
  const int32_t ksize = plan.args.ksize;
  const float* w = plan.weights.data();
  rows_for(pool, d.height, [&](int32_t y0, int32_t y1) {
    for (int32_t y = y0; y < y1; ++y) {
      auto* out = reinterpret_cast<float*>(row_ptr(rows, y));
      for (int32_t x = 0; x < d.width; ++x) {
        for (int32_t c = 0; c < d.channels; ++c) {
          out[static_cast<int64_t>(x) * d.channels + c] = kiln_enhance_blur_row(src.base, d, w, ksize, x, y, c);
        }
      }
    }
  });
  rows_for(pool, d.height, [&](int32_t y0, int32_t y1) {
    for (int32_t y = y0; y < y1; ++y) {
      uint8_t* out = row_ptr(dst, y);
      for (int32_t x = 0; x < d.width; ++x) {
        for (int32_t c = 0; c < d.channels; ++c) {
          const int32_t blurred = kiln_enhance_blur_col(rows.base, rows.desc, w, ksize, x, y, c);
          const int32_t value = kiln_enhance_load(src.base, d, x, y, c);
          out[static_cast<int64_t>(x) * d.channels + c] =
              kiln_enhance_unsharp(value, blurred, plan.args.percent, plan.args.threshold);
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
  const Plane src = plane_of(in);
  const Plane dst = plane_of(out);
  std::vector<uint8_t> storage;
  const Plane rows = plane_temp(storage, in, 4);
  const KilnImageDesc& d = src.desc;
  for (int32_t y = 0; y < d.height; ++y) {
    auto* r = reinterpret_cast<float*>(row_ptr(rows, y));
    for (int32_t x = 0; x < d.width; ++x) {
      for (int32_t c = 0; c < d.channels; ++c) {
        r[static_cast<int64_t>(x) * d.channels + c] = kiln_enhance_blur_row(src.base, d, w.data(), ksize, x, y, c);
      }
    }
  }
  for (int32_t y = 0; y < d.height; ++y) {
    uint8_t* o = row_ptr(dst, y);
    for (int32_t x = 0; x < d.width; ++x) {
      for (int32_t c = 0; c < d.channels; ++c) {
        o[static_cast<int64_t>(x) * d.channels + c] =
            static_cast<uint8_t>(kiln_enhance_blur_col(rows.base, rows.desc, w.data(), ksize, x, y, c));
      }
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
    if (in.row_stride > INT32_MAX || out_view.row_stride > INT32_MAX) return invalid_argument("enhance: row stride too large");
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
    if (unsharp) {
      const Plane rows = plane_temp(temp_rows, in, 4);
      unsharp_step(plan, cur, rows, out, pool);
    }
  }
  return Status::ok();
}

}  // namespace kiln
