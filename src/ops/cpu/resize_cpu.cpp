// Resize on the CPU: per image, the plan's tables are built once; rows are spread over the pool. In the reference
// mode (and for what the fast path does not take) each output row takes the column sums of its source rows over
// the columns it uses (contiguous, vectorizable), then the weighted row sums per output pixel: the float
// expression of kiln_resize_sample (resize_px.h), evaluated in the same order, so the GPU backends match bit for
// bit. Two-tap u8 resizes of 3/4-channel images otherwise take resize_bilinear_u8.h (within 1 level).
#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "core/thread_pool.h"
#include "ops/cpu/resize_bilinear_u8.h"
#include "ops/resize.h"

namespace kiln {

namespace {

// scratch[k] = sum_j wy[j] * src_row_j[k] over the n values of the used column span.
template <typename T>
void column_sums(const ImageView& src, int32_t channels, const ResizePlan& plan, int32_t ty, float* scratch) {
  const int32_t taps = plan.y.taps;
  const int32_t* iy = plan.y.index.data() + static_cast<size_t>(ty) * taps;
  const float* wy = plan.y.weight.data() + static_cast<size_t>(ty) * taps;
  const int64_t first = static_cast<int64_t>(plan.x.lo) * channels;
  const int64_t n = static_cast<int64_t>(plan.x.hi - plan.x.lo + 1) * channels;
  {
    const T* row = src.row<const T>(iy[0]) + first;
    const float w = wy[0];
    for (int64_t k = 0; k < n; ++k) scratch[k] = w * static_cast<float>(row[k]);
  }
  for (int32_t j = 1; j < taps; ++j) {
    const T* row = src.row<const T>(iy[j]) + first;
    const float w = wy[j];
    for (int64_t k = 0; k < n; ++k) scratch[k] = scratch[k] + w * static_cast<float>(row[k]);
  }
}

template <int32_t kChannels>
void row_sums(const float* scratch, const ResizePlan& plan, float* out) {
  const int32_t taps = plan.x.taps;
  const int32_t width = plan.dst.width;
  const int32_t lo = plan.x.lo;
  const int32_t* ix = plan.x.index.data();
  const float* wx = plan.x.weight.data();
  if (taps == 2) {
    for (int32_t x = 0; x < width; ++x) {
      const float* a = scratch + (ix[2 * x] - lo) * kChannels;
      const float* b = scratch + (ix[2 * x + 1] - lo) * kChannels;
      const float w0 = wx[2 * x];
      const float w1 = wx[2 * x + 1];
      for (int32_t c = 0; c < kChannels; ++c) out[x * kChannels + c] = w0 * a[c] + w1 * b[c];
    }
    return;
  }
  for (int32_t x = 0; x < width; ++x) {
    const int32_t* xi = ix + static_cast<size_t>(x) * taps;
    const float* xw = wx + static_cast<size_t>(x) * taps;
    float acc[kChannels];
    const float* s0 = scratch + (xi[0] - lo) * kChannels;
    for (int32_t c = 0; c < kChannels; ++c) acc[c] = xw[0] * s0[c];
    for (int32_t i = 1; i < taps; ++i) {
      const float* s = scratch + (xi[i] - lo) * kChannels;
      for (int32_t c = 0; c < kChannels; ++c) acc[c] = acc[c] + xw[i] * s[c];
    }
    for (int32_t c = 0; c < kChannels; ++c) out[x * kChannels + c] = acc[c];
  }
}

// kiln_u8_round_even without floorf (a libm call without SSE4.1): adding 2^23 rounds a float in [0, 2^23) to an
// integer, half to even, in the default rounding mode. The same value for every input, NaN included (-> 0).
inline uint8_t u8_round_even(float v) {
  if (!(v > 0.0f)) return 0;
  if (v >= 255.0f) return 255;
  return static_cast<uint8_t>(static_cast<int32_t>((v + 8388608.0f) - 8388608.0f));
}

// One image (or one plane, channels = 1) of a resize. Two-tap u8 resizes take the fast path outside the reference
// mode (resize_bilinear_u8.h: within 1 level of the float expression).
template <typename T>
void resize_image(const ImageView& src, const ImageView& dst, int32_t channels, const ResizePlan& plan,
                  const float* pad, ThreadPool* pool) {
  const bool fast = sizeof(T) == 1 && bilinear_u8_usable(plan, src, channels);
  const BilinearU8Tables tables = fast ? bilinear_u8_tables(plan, channels, src.width) : BilinearU8Tables{};
  const size_t span = static_cast<size_t>(plan.x.hi - plan.x.lo + 1) * static_cast<size_t>(channels);
  parallel_for(pool, dst.height, [&](int64_t begin, int64_t end) {
    std::optional<BilinearU8Rows> fast_rows;
    if (fast) fast_rows.emplace(tables);
    std::vector<float> scratch(fast ? 0 : span);
    std::vector<float> values(fast ? 0 : static_cast<size_t>(plan.dst.width) * static_cast<size_t>(channels));
    T pad_px[4];
    for (int32_t c = 0; c < channels; ++c) {
      if constexpr (sizeof(T) == 1) {
        pad_px[c] = kiln_u8_round_even(pad[c]);
      } else {
        pad_px[c] = pad[c];
      }
    }
    for (int64_t y = begin; y < end; ++y) {
      T* out = dst.row<T>(static_cast<int32_t>(y));
      const auto ty = static_cast<int32_t>(y) - plan.dst.y;
      if (ty < 0 || ty >= plan.dst.height) {
        for (int32_t x = 0; x < dst.width; ++x) {
          for (int32_t c = 0; c < channels; ++c) out[x * channels + c] = pad_px[c];
        }
        continue;
      }
      for (int32_t x = 0; x < plan.dst.x * channels; ++x) out[x] = pad_px[x % channels];
      T* inner = out + static_cast<size_t>(plan.dst.x) * channels;
      const int32_t n = plan.dst.width * channels;
      if constexpr (sizeof(T) == 1) {
        if (fast) {
          const float* h0 = nullptr;
          const float* h1 = nullptr;
          float b0 = 0.0f;
          float b1 = 0.0f;
          fast_rows->rows_for(src, plan, ty, &h0, &h1, &b0, &b1);
          avx2::bilinear_u8_vrow(h0, h1, b0, b1, tables, inner);
        } else {
          resize_row_cpu(src, channels, plan, ty, scratch.data(), values.data());
          for (int32_t k = 0; k < n; ++k) inner[k] = u8_round_even(values[static_cast<size_t>(k)]);
        }
      } else {
        resize_row_cpu(src, channels, plan, ty, scratch.data(), values.data());
        std::memcpy(inner, values.data(), sizeof(float) * static_cast<size_t>(n));
      }
      for (int32_t x = (plan.dst.x + plan.dst.width) * channels; x < dst.width * channels; ++x) {
        out[x] = pad_px[x % channels];
      }
    }
  }, ThreadPool::min_rows(static_cast<int64_t>(dst.width) * channels));
}

}  // namespace

void resize_row_cpu(const ImageView& src, int32_t channels, const ResizePlan& plan, int32_t ty, float* scratch,
                    float* out) {
  if (src.type == PixelType::kU8) {
    column_sums<uint8_t>(src, channels, plan, ty, scratch);
  } else {
    column_sums<float>(src, channels, plan, ty, scratch);
  }
  switch (channels) {
    case 1: row_sums<1>(scratch, plan, out); break;
    case 3: row_sums<3>(scratch, plan, out); break;
    case 4: row_sums<4>(scratch, plan, out); break;
    default: row_sums<2>(scratch, plan, out); break;
  }
}

Status resize_cpu(const OpCall& call, ThreadPool* pool) {
  KILN_TRY(resize_validate(call));
  const auto& params = *static_cast<const ResizeParams*>(call.params);
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out = call.out[i];
    const ResizePlan plan =
        resize_plan_make(params.interp, params.fit, resize_source_rect(params, in, i), out.width, out.height);
    // A CHW image is `channels` one-channel planes.
    const bool planar = in.layout == Layout::kCHW;
    const int32_t planes = planar ? in.channels : 1;
    const int32_t channels = planar ? 1 : in.channels;
    for (int32_t p = 0; p < planes; ++p) {
      ImageView src = in;
      ImageView dst = out;
      src.data = in.row<uint8_t>(0, p);
      dst.data = out.row<uint8_t>(0, p);
      const float* pad = params.pad + p;
      if (in.type == PixelType::kU8) {
        resize_image<uint8_t>(src, dst, channels, plan, pad, pool);
      } else {
        resize_image<float>(src, dst, channels, plan, pad, pool);
      }
    }
  }
  return Status::ok();
}

}  // namespace kiln
