// The warp family on the CPU: rows of every output image spread over the pool. Each pixel computes exactly the
// warp_px.h expressions (the reference for the GPU backends): u8/f32 HWC images with 1-4 channels take a
// specialised loop for pixels whose four taps lie inside the source (same float operations in the same order,
// without the per-tap type/layout/border dispatch); every other pixel goes through kiln_warp_pixel itself.
// u8 images take the ISA variants' row loops (warp_loops.h: generic here, avx2 in warp_avx2.cpp), bit-identical
// too, except in the scalar reference mode (KILN_CPU_ISA=scalar), which keeps the loop below.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/cpu_isa.h"
#include "core/thread_pool.h"
#include "ops/cpu/warp_scalar_math.h"
#include "ops/warp.h"
#include "ops/warp_px.h"

#define KILN_WARP_VARIANT generic
#include "ops/cpu/warp_loops.h"
#undef KILN_WARP_VARIANT

namespace kiln {

namespace {

template <typename T>
inline void store_value(T* dst, float v);
template <>
inline void store_value<uint8_t>(uint8_t* dst, float v) {
  *dst = u8_round_even(v);
}
template <>
inline void store_value<float>(float* dst, float v) {
  *dst = v;
}

// One output row of a u8 or f32 HWC image with C channels (input of the same type, layout and channel count).
template <typename T, int C>
void warp_row(const uint8_t* in_base, const KilnImageDesc& in, uint8_t* out_base, const KilnImageDesc& out,
              const float* m, int32_t mode, const float* b, int32_t y) {
  const float m0 = m[0];
  const float m2 = m[2];
  const float m3 = m[3];
  const float m5 = m[5];
  const float fyd = static_cast<float>(y);
  const float row_x = m[1] * fyd;
  const float row_y = m[4] * fyd;
  const uint8_t* src = in_base + in.offset;
  const int64_t in_stride = in.row_stride;
  // x0 in [0, width - 2] and y0 in [0, height - 2]: all four taps inside
  const auto x_limit = static_cast<uint32_t>(in.width - 1);
  const auto y_limit = static_cast<uint32_t>(in.height - 1);
  T* dst = reinterpret_cast<T*>(out_base + out.offset + static_cast<int64_t>(y) * out.row_stride);
  const int32_t width = out.width;
  for (int32_t x = 0; x < width; ++x) {
    const float fxd = static_cast<float>(x);
    const float sx = kiln_warp_coord_clamp((m0 * fxd + row_x) + m2);
    const float sy = kiln_warp_coord_clamp((m3 * fxd + row_y) + m5);
    int32_t x0;
    int32_t y0;
    const float x0f = floor_clamped(sx, &x0);
    const float y0f = floor_clamped(sy, &y0);
    if (static_cast<uint32_t>(x0) < x_limit && static_cast<uint32_t>(y0) < y_limit) {
      const float fx = sx - x0f;
      const float fy = sy - y0f;
      const float gx = 1.0f - fx;
      const float gy = 1.0f - fy;
      const T* r0 = reinterpret_cast<const T*>(src + static_cast<int64_t>(y0) * in_stride) + static_cast<int64_t>(x0) * C;
      const T* r1 = reinterpret_cast<const T*>(src + static_cast<int64_t>(y0 + 1) * in_stride) +
                    static_cast<int64_t>(x0) * C;
      T* d = dst + static_cast<int64_t>(x) * C;
      for (int c = 0; c < C; ++c) {
        const auto p00 = static_cast<float>(r0[c]);
        const auto p01 = static_cast<float>(r0[C + c]);
        const auto p10 = static_cast<float>(r1[c]);
        const auto p11 = static_cast<float>(r1[C + c]);
        const float top = p00 * gx + p01 * fx;
        const float bottom = p10 * gx + p11 * fx;
        const float v = top * gy + bottom * fy;
        store_value<T>(d + c, v);
      }
    } else {
      kiln_warp_pixel(in_base, in, out_base, out, m, mode, b[0], b[1], b[2], b[3], x, y);
    }
  }
}

using RowFn = void (*)(const uint8_t*, const KilnImageDesc&, uint8_t*, const KilnImageDesc&, const float*, int32_t,
                       const float*, int32_t);

void generic_row(const uint8_t* in_base, const KilnImageDesc& in, uint8_t* out_base, const KilnImageDesc& out,
                 const float* m, int32_t mode, const float* b, int32_t y) {
  for (int32_t x = 0; x < out.width; ++x) {
    kiln_warp_pixel(in_base, in, out_base, out, m, mode, b[0], b[1], b[2], b[3], x, y);
  }
}

template <typename T>
RowFn pick_channels(int32_t channels) {
  switch (channels) {
    case 1:
      return &warp_row<T, 1>;
    case 2:
      return &warp_row<T, 2>;
    case 3:
      return &warp_row<T, 3>;
    case 4:
      return &warp_row<T, 4>;
    default:
      return &generic_row;
  }
}

RowFn pick_row(const KilnImageDesc& in, const KilnImageDesc& out) {
  if (in.type != out.type || in.layout != KILN_LAYOUT_HWC || out.layout != KILN_LAYOUT_HWC ||
      in.channels != out.channels) {
    return &generic_row;
  }
  if (in.type == KILN_PIXEL_U8) return pick_channels<uint8_t>(in.channels);
  if (in.type == KILN_PIXEL_F32) return pick_channels<float>(in.channels);
  return &generic_row;
}

}  // namespace

Status warp_cpu(const OpCall& call, ThreadPool* pool) {
  const auto& params = *static_cast<const WarpParams*>(call.params);
  const std::vector<std::array<float, 6>> matrices = warp_source_matrices(params, call.in.count);
  const auto mode = static_cast<int32_t>(params.border);
  const float* b = params.border_value;
  const CpuIsa isa = cpu_isa_active();
  const auto fast_rows = isa == CpuIsa::kAvx2 ? avx2::warp_u8_rows : generic::warp_u8_rows;
  struct Image {
    WarpImageJob job;
    RowFn row;  // one row at a time (f32, other layouts, the scalar mode)
    bool fast;  // rows in ranges by fast_rows
    int64_t first_row;
  };
  std::vector<Image> images(static_cast<size_t>(call.out.count));
  int64_t rows = 0;
  int64_t values_per_row = 1;  // of the widest output
  for (int64_t i = 0; i < call.out.count; ++i) {
    Image& image = images[static_cast<size_t>(i)];
    WarpImageJob& job = image.job;
    job.in_base = static_cast<const uint8_t*>(call.in[i].data);
    job.in = image_desc(call.in[i]);
    job.out_base = static_cast<uint8_t*>(call.out[i].data);
    job.out = image_desc(call.out[i]);
    job.m = matrices[static_cast<size_t>(i)].data();
    job.mode = mode;
    job.border = b;
    image.row = pick_row(job.in, job.out);
    image.fast = isa != CpuIsa::kScalar && job.in.type == KILN_PIXEL_U8 && job.out.type == KILN_PIXEL_U8 &&
                 job.in.layout == KILN_LAYOUT_HWC && job.out.layout == KILN_LAYOUT_HWC &&
                 job.in.channels == job.out.channels && job.in.channels >= 1 && job.in.channels <= 4;
    image.first_row = rows;
    rows += job.out.height;
    values_per_row = std::max<int64_t>(values_per_row, static_cast<int64_t>(job.out.width) * job.out.channels);
  }
  auto run = [&](int64_t begin, int64_t end) {
    size_t i = 0;
    while (begin < end) {
      while (images[i].first_row + images[i].job.out.height <= begin) ++i;
      const Image& image = images[i];
      const auto y_begin = static_cast<int32_t>(begin - image.first_row);
      const auto y_end = static_cast<int32_t>(std::min<int64_t>(end - image.first_row, image.job.out.height));
      const WarpImageJob& job = image.job;
      if (image.fast) {
        fast_rows(job, y_begin, y_end);
      } else {
        for (int32_t y = y_begin; y < y_end; ++y) {
          image.row(job.in_base, job.in, job.out_base, job.out, job.m, mode, b, y);
        }
      }
      begin = image.first_row + y_end;
    }
  };
  parallel_for(pool, rows, run, ThreadPool::min_rows(values_per_row));
  return Status::ok();
}

}  // namespace kiln
