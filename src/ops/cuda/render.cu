// Chart rendering kernels around ops/render_px.h. Every pixel value is produced by the same render_px.h calls,
// in the same order, as the CPU loops (src/ops/cpu/render_loops.h); the build disables FMA contraction and keeps
// division and sqrt IEEE-rounded, so images are byte-identical to the CPU's.
//
// Scalar functions (host + device): line_segment / ohlc_bar (per-window data), line_column (a column's segment
// span and row band), line_pixel / ohlc_pixel (one pixel). Two launches per batch:
//  - render_setup_kernel: one block per window; block-wide min/max of the window (finite check included), then
//    the window's segments (line) or bar rows and ink deltas (OHLC) into device scratch.
//  - render_line_kernel / render_ohlc_kernel: grid = column tiles x row chunks x images. A block is 32 columns
//    x 8 thread rows, so a warp writes 32 consecutive pixels of a row; it walks kRowsPerBlock rows of its tile.
//    For lines, the block's first warp runs line_column() per column (segment rows cached in shared memory),
//    then every thread shades its pixels with line_pixel().
// With a volume panel or moving averages a third launch, render_layers_kernel (a thread per column and image), sets
// their ink pixels over the price layer (render_px.h, "Layers").
#include "ops/cuda/render.cuh"

#include "core/fault.h"
#include "ops/cuda/common.cuh"
#include "ops/render_px.h"

namespace kiln {

namespace {

constexpr int32_t kSetupThreads = 128;
constexpr int32_t kSetupWarps = kSetupThreads / 32;
constexpr int32_t kTileColumns = 32;
constexpr int32_t kTileRows = 8;
constexpr int32_t kRowsPerBlock = 64;
constexpr int32_t kMaxCachedSegments = 16;  // per column; segments past these recompute their rows
constexpr int64_t kMaxGridImages = 65535;   // gridDim.z limit; kernels loop over the rest
constexpr int64_t kMaxSetupBlocks = int64_t{1} << 20;
constexpr size_t kScratchAlign = 256;

struct WindowRange {
  float vmin;
  float vmax;
  int32_t finite;  // 0: the window holds NaN/inf and renders as background only
  int32_t pad;
};

struct OhlcBar {
  int32_t open_row;
  int32_t high_row;
  int32_t low_row;
  int32_t close_row;
  float delta;  // ink - background
};

struct RenderArgs {
  const float* series;
  const int64_t* starts;
  int64_t count;
  int32_t channels;
  int32_t seq_len;
  int32_t width;
  int32_t height;
  int32_t price_height;  // rows of the price area (the top of the image)
  int32_t parts;         // OHLC sub-columns a day (4 with the gap, else 3)
  int32_t volume_lane;   // -1: no volume
  int32_t volume_rows;
  int32_t average_lane;  // first of `averages` moving-average lanes
  int32_t averages;
  int32_t ohlc;    // the windows hold Open/High/Low/Close bars
  int32_t candle;  // ... drawn as candlesticks
  float line_width;
  float background;
  float ink;
  float ink_bullish;
  float ink_bearish;
  float volume_up;    // volume bars of bullish days (kiln_day_bullish)
  float volume_down;  // ... and of the others
  float average_inks[kMaxMovingAverageLines];
  WindowRange* ranges;
  KilnSegment* segments;  // line: count x (seq_len - 1)
  OhlcBar* bars;          // OHLC: count x seq_len
};

// ---- Scalar functions (host and device, so their logic can be exercised without a GPU) ----

template <typename Pixel>
__host__ __device__ inline Pixel level_to_pixel(float level);

template <>
__host__ __device__ inline uint8_t level_to_pixel<uint8_t>(float level) {
  return kiln_level_to_u8(level);
}

template <>
__host__ __device__ inline float level_to_pixel<float>(float level) {
  return kiln_level_to_unit(level);
}

// Segment k of a line window (values: the window's first value, `stride` floats apart), as the CPU makes it.
__host__ __device__ inline KilnSegment line_segment(const float* values, int64_t stride, int32_t k, float vmin,
                                                    float vmax, float x_step, int32_t height) {
  const float y0 = kiln_point_y(values[k * stride], vmin, vmax, height);
  const float y1 = kiln_point_y(values[(k + 1) * stride], vmin, vmax, height);
  return kiln_segment_make(kiln_point_x(k, x_step), y0, kiln_point_x(k + 1, x_step), y1);
}

__host__ __device__ inline OhlcBar ohlc_bar(const float* bar, float vmin, float vmax, const RenderArgs& a) {
  OhlcBar b;
  b.open_row = kiln_ohlc_row(bar[0], vmin, vmax, a.price_height);
  b.high_row = kiln_ohlc_row(bar[1], vmin, vmax, a.price_height);
  b.low_row = kiln_ohlc_row(bar[2], vmin, vmax, a.price_height);
  b.close_row = kiln_ohlc_row(bar[3], vmin, vmax, a.price_height);
  b.delta = (bar[3] >= bar[0] ? a.ink_bullish : a.ink_bearish) - a.background;
  return b;
}

// What a line column needs for all its rows: the segments that can touch it, [k_lo, k_hi], and the rows any of
// them can touch, [band_lo, band_hi]. The rows of the first kMaxCachedSegments segments go to
// rows[j * rows_stride] (shared memory in the kernel).
struct LineColumn {
  int32_t k_lo;
  int32_t k_hi;
  int32_t band_lo;
  int32_t band_hi;
};

__host__ __device__ inline LineColumn line_column(const KilnSegment* segments, int32_t c, int32_t seq_len,
                                                  int32_t height, float x_step, float reach, int2* rows,
                                                  int32_t rows_stride) {
  LineColumn col{0, -1, height, -1};
  kiln_line_segment_span(c, reach, x_step, seq_len, &col.k_lo, &col.k_hi);
  for (int32_t k = col.k_lo; k <= col.k_hi; ++k) {
    int32_t y_lo = 0;
    int32_t y_hi = -1;
    kiln_line_segment_rows(c, reach, segments[k], height, &y_lo, &y_hi);
    if (k - col.k_lo < kMaxCachedSegments) rows[(k - col.k_lo) * rows_stride] = make_int2(y_lo, y_hi);
    if (y_lo <= y_hi) {
      col.band_lo = kiln_mini(col.band_lo, y_lo);
      col.band_hi = kiln_maxi(col.band_hi, y_hi);
    }
  }
  return col;
}

// A line pixel: kiln_nearest_coverage() of the nearest point over the column's segments whose rows contain y (in
// increasing k, as the CPU; the others are farther than the reach), shaded; background outside the column's band.
template <typename Pixel>
__host__ __device__ inline Pixel line_pixel(const KilnSegment* segments, const LineColumn& col, const int2* rows,
                                            int32_t rows_stride, int32_t c, int32_t y, int32_t height, float r,
                                            float reach, float background, float ink) {
  if (y < col.band_lo || y > col.band_hi) return level_to_pixel<Pixel>(background);
  const float px = static_cast<float>(c);
  const float py = static_cast<float>(y);
  KilnNearest nearest = kiln_nearest_none();
  for (int32_t k = col.k_lo; k <= col.k_hi; ++k) {
    int32_t y_lo = 0;
    int32_t y_hi = -1;
    if (k - col.k_lo < kMaxCachedSegments) {
      const int2 cached = rows[(k - col.k_lo) * rows_stride];
      y_lo = cached.x;
      y_hi = cached.y;
    } else {
      kiln_line_segment_rows(c, reach, segments[k], height, &y_lo, &y_hi);
    }
    if (y < y_lo || y > y_hi) continue;
    const KilnSegment g = segments[k];
    const float ox = px - g.ax;
    kiln_nearest_update(g, ox, ox * g.dx, py, &nearest);
  }
  const float coverage = kiln_nearest_coverage(nearest, r, r < KILN_LINE_REACH_PAD);
  return level_to_pixel<Pixel>(kiln_shade(coverage, background, ink));
}

// An OHLC pixel: background + the ordered sum over sub-columns [m_lo, m_hi] of column c whose rows contain y
// (gaps and zero overlaps skipped); background when none does.
template <typename Pixel>
__host__ __device__ inline Pixel ohlc_pixel(const OhlcBar* bars, int32_t c, int32_t y, int32_t m_lo, int32_t m_hi,
                                            float sx, float background, int32_t candle, int32_t parts) {
  float acc = 0.0f;
  bool hit = false;
  for (int32_t m = m_lo; m <= m_hi; ++m) {
    const int32_t day = m / parts;
    const int32_t part = m - day * parts;
    if (part == 3) continue;
    const float f = kiln_ohlc_overlap(c, m, sx);
    if (!(f > 0.0f)) continue;
    const OhlcBar& bar = bars[day];
    int32_t top = 0;
    int32_t bottom = 0;
    kiln_bar_part_rows(part, candle, bar.open_row, bar.high_row, bar.low_row, bar.close_row, &top, &bottom);
    if (y < top || y > bottom) continue;
    acc += f * bar.delta;
    hit = true;
  }
  return level_to_pixel<Pixel>(hit ? background + acc : background);
}

// ---- Kernels ----

__global__ void __launch_bounds__(kSetupThreads) render_setup_kernel(RenderArgs a) {
  __shared__ float s_lo[kSetupWarps];
  __shared__ float s_hi[kSetupWarps];
  __shared__ int32_t s_finite[kSetupWarps];
  const int32_t tid = static_cast<int32_t>(threadIdx.x);
  const int32_t n = a.seq_len;
  const int64_t stride = a.channels;
  // Lines read the close (lane 3) of OHLC data; OHLC ranges span all four price lanes of every bar; the moving
  // averages widen the range; the volume only has to be finite.
  const int32_t price_channels = a.volume_lane >= 0 ? a.volume_lane : a.average_lane;
  const int32_t lane0 = (!a.ohlc && price_channels == 4) ? 3 : 0;
  const int64_t total = a.ohlc ? int64_t{4} * n : int64_t{n};
  const int64_t averaged = int64_t{a.averages} * n;

  for (int64_t img = blockIdx.x; img < a.count; img += gridDim.x) {
    const float* window = a.series + a.starts[img] * stride;
    const float* values = window + lane0;
    // The same comparisons as the CPU's chart_range(): for finite values min/max do not depend on the order
    // (a -0/+0 tie changes no pixel), and a window with a non-finite value is never drawn.
    float lo = values[0];
    float hi = values[0];
    int32_t finite = 1;
    for (int64_t e = tid; e < total; e += kSetupThreads) {
      const float v = values[a.ohlc ? (e >> 2) * stride + (e & 3) : e * stride];
      finite &= (v - v == 0.0f) ? 1 : 0;
      lo = kiln_minf(lo, v);
      hi = kiln_maxf(hi, v);
    }
    for (int64_t e = tid; e < averaged; e += kSetupThreads) {
      const float v = window[(e / a.averages) * stride + a.average_lane + e % a.averages];
      finite &= (v - v == 0.0f) ? 1 : 0;
      lo = kiln_minf(lo, v);
      hi = kiln_maxf(hi, v);
    }
    if (a.volume_lane >= 0) {
      for (int64_t e = tid; e < n; e += kSetupThreads) {
        const float v = window[e * stride + a.volume_lane];
        finite &= (v - v == 0.0f) ? 1 : 0;
      }
    }
    for (int32_t offset = 16; offset > 0; offset >>= 1) {
      lo = kiln_minf(lo, __shfl_down_sync(0xffffffffu, lo, offset));
      hi = kiln_maxf(hi, __shfl_down_sync(0xffffffffu, hi, offset));
      finite &= __shfl_down_sync(0xffffffffu, finite, offset);
    }
    if ((tid & 31) == 0) {
      s_lo[tid >> 5] = lo;
      s_hi[tid >> 5] = hi;
      s_finite[tid >> 5] = finite;
    }
    __syncthreads();
    lo = s_lo[0];
    hi = s_hi[0];
    finite = s_finite[0];
    for (int32_t w = 1; w < kSetupWarps; ++w) {
      lo = kiln_minf(lo, s_lo[w]);
      hi = kiln_maxf(hi, s_hi[w]);
      finite &= s_finite[w];
    }
    if (tid == 0) a.ranges[img] = WindowRange{lo, hi, finite, 0};

    if (finite && !a.ohlc) {
      const float x_step = kiln_line_x_step(a.width, n);
      KilnSegment* segments = a.segments + img * static_cast<int64_t>(n - 1);
      for (int32_t k = tid; k < n - 1; k += kSetupThreads) {
        segments[k] = line_segment(values, stride, k, lo, hi, x_step, a.price_height);
      }
    } else if (finite) {
      OhlcBar* bars = a.bars + img * static_cast<int64_t>(n);
      for (int32_t i = tid; i < n; i += kSetupThreads) bars[i] = ohlc_bar(values + stride * i, lo, hi, a);
    }
    __syncthreads();  // s_lo/s_hi/s_finite are rewritten for the next window
  }
}

template <typename Pixel>
__global__ void __launch_bounds__(kTileColumns* kTileRows) render_line_kernel(RenderArgs a, Pixel* out) {
  __shared__ int2 s_rows[kMaxCachedSegments][kTileColumns];
  __shared__ LineColumn s_columns[kTileColumns];
  const int32_t w = a.width;
  const int32_t h = a.height;
  const int32_t ph = a.price_height;  // segments reach no row below the price area
  const int32_t n = a.seq_len;
  const int32_t tx = static_cast<int32_t>(threadIdx.x);
  const int32_t c = static_cast<int32_t>(blockIdx.x) * kTileColumns + tx;
  const int32_t row0 = static_cast<int32_t>(blockIdx.y) * kRowsPerBlock + static_cast<int32_t>(threadIdx.y);
  const int32_t row_end = kiln_mini(static_cast<int32_t>(blockIdx.y) * kRowsPerBlock + kRowsPerBlock, h);
  const float x_step = kiln_line_x_step(w, n);
  const float r = 0.5f * a.line_width;
  const float reach = r + KILN_LINE_REACH_PAD;
  const Pixel blank = level_to_pixel<Pixel>(a.background);

  for (int64_t img = blockIdx.z; img < a.count; img += gridDim.z) {
    Pixel* image = out + img * static_cast<int64_t>(w) * h;
    if (!a.ranges[img].finite) {  // uniform over the block: no barrier is skipped by part of it
      if (c < w) {
        for (int32_t y = row0; y < row_end; y += kTileRows) image[static_cast<int64_t>(y) * w + c] = blank;
      }
      continue;
    }
    const KilnSegment* segments = a.segments + img * static_cast<int64_t>(n - 1);
    if (threadIdx.y == 0 && c < w) {
      s_columns[tx] = line_column(segments, c, n, ph, x_step, reach, &s_rows[0][tx], kTileColumns);
    }
    __syncthreads();
    if (c < w) {
      const LineColumn col = s_columns[tx];
      for (int32_t y = row0; y < row_end; y += kTileRows) {
        image[static_cast<int64_t>(y) * w + c] =
            line_pixel<Pixel>(segments, col, &s_rows[0][tx], kTileColumns, c, y, ph, r, reach, a.background, a.ink);
      }
    }
    __syncthreads();  // the shared column data is rewritten for the next image
  }
}

template <typename Pixel>
__global__ void __launch_bounds__(kTileColumns* kTileRows) render_ohlc_kernel(RenderArgs a, Pixel* out) {
  const int32_t w = a.width;
  const int32_t h = a.height;
  const int32_t n = a.seq_len;
  const int32_t c = static_cast<int32_t>(blockIdx.x) * kTileColumns + static_cast<int32_t>(threadIdx.x);
  if (c >= w) return;  // no barriers below
  const int32_t row0 = static_cast<int32_t>(blockIdx.y) * kRowsPerBlock + static_cast<int32_t>(threadIdx.y);
  const int32_t row_end = kiln_mini(static_cast<int32_t>(blockIdx.y) * kRowsPerBlock + kRowsPerBlock, h);
  const int32_t sub_columns = a.parts * n;
  const float sx = static_cast<float>(w) / static_cast<float>(sub_columns);
  int32_t m_lo = 0;
  int32_t m_hi = -1;
  kiln_ohlc_sub_column_span(c, sx, sub_columns, &m_lo, &m_hi);
  const Pixel blank = level_to_pixel<Pixel>(a.background);

  for (int64_t img = blockIdx.z; img < a.count; img += gridDim.z) {
    Pixel* image = out + img * static_cast<int64_t>(w) * h;
    const bool finite = a.ranges[img].finite != 0;
    const OhlcBar* bars = a.bars + img * static_cast<int64_t>(n);
    for (int32_t y = row0; y < row_end; y += kTileRows) {
      image[static_cast<int64_t>(y) * w + c] =
          finite ? ohlc_pixel<Pixel>(bars, c, y, m_lo, m_hi, sx, a.background, a.candle, a.parts) : blank;
    }
  }
}

// Volume bars and moving-average lines of column c of each image, over the price layer.
template <typename Pixel>
__global__ void render_layers_kernel(RenderArgs a, Pixel* out) {
  const int32_t w = a.width;
  const int32_t n = a.seq_len;
  const int64_t stride = a.channels;
  const float sx = static_cast<float>(w) / static_cast<float>(a.parts * n);
  const float x_step = kiln_line_x_step(w, n);
  const int64_t items = a.count * w;
  for (int64_t id = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; id < items;
       id += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t c = static_cast<int32_t>(id % w);
    const int64_t img = id / w;
    const WindowRange range = a.ranges[img];
    if (!range.finite) continue;
    const float* window = a.series + a.starts[img] * stride;
    Pixel* column = out + img * static_cast<int64_t>(w) * a.height + c;
    if (a.volume_lane >= 0) {
      float largest = 0.0f;
      for (int32_t i = 0; i < n; ++i) largest = kiln_maxf(largest, window[i * stride + a.volume_lane]);
      const int32_t close = a.volume_lane - 1;  // the volume follows the prices
      for (int32_t i = 0; i < n; ++i) {
        if (kiln_day_column(i, a.ohlc, a.parts, sx, x_step, w) != c) continue;
        const float* day = window + i * stride;
        const float prev_close = i > 0 ? day[close - stride] : day[close];
        const Pixel ink = level_to_pixel<Pixel>(
            kiln_day_bullish(a.volume_lane == 4, i, day[0], day[close], prev_close) ? a.volume_up : a.volume_down);
        const int32_t filled = kiln_volume_rows(day[a.volume_lane], largest, a.volume_rows);
        for (int32_t y = a.height - filled; y < a.height; ++y) column[static_cast<int64_t>(y) * w] = ink;
      }
    }
    for (int32_t m = 0; m < a.averages; ++m) {
      const float* average = window + a.average_lane + m;
      const Pixel ink = level_to_pixel<Pixel>(a.average_inks[m]);
      int32_t x0 = kiln_day_column(0, a.ohlc, a.parts, sx, x_step, w);
      int32_t y0 = kiln_ohlc_row(average[0], range.vmin, range.vmax, a.price_height);
      for (int32_t k = 1; k < n; ++k) {
        const int32_t x1 = kiln_day_column(k, a.ohlc, a.parts, sx, x_step, w);
        if (x0 > c) break;
        const int32_t y1 = kiln_ohlc_row(average[k * stride], range.vmin, range.vmax, a.price_height);
        if (x1 >= c) {
          int32_t lo = 0;
          int32_t hi = -1;
          kiln_aliased_rows(c, x0, y0, x1, y1, &lo, &hi);
          for (int32_t y = lo; y <= hi; ++y) column[static_cast<int64_t>(y) * w] = ink;
        }
        x0 = x1;
        y0 = y1;
      }
    }
  }
}

size_t ranges_bytes(int64_t count) {
  return align_up(static_cast<size_t>(count) * sizeof(WindowRange), kScratchAlign);
}

template <typename Pixel>
Status launch_render_kernel(const RenderArgs& args, void* d_out, cudaStream_t stream) {
  const dim3 block(kTileColumns, kTileRows);
  const dim3 grid(static_cast<uint32_t>(ceil_div(args.width, kTileColumns)),
                  static_cast<uint32_t>(ceil_div(args.height, kRowsPerBlock)),
                  static_cast<uint32_t>(args.count < kMaxGridImages ? args.count : kMaxGridImages));
  if (fault_should_fail(FaultSite::kLaunch)) {
    return Status(Errc::kDeviceError, "render kernel launch failed (injected by KILN_FAULT)");
  }
  if (args.ohlc) {
    render_ohlc_kernel<Pixel><<<grid, block, 0, stream>>>(args, static_cast<Pixel*>(d_out));
  } else {
    render_line_kernel<Pixel><<<grid, block, 0, stream>>>(args, static_cast<Pixel*>(d_out));
  }
  KILN_CUDA_CHECK(cudaGetLastError());
  if (args.volume_lane >= 0 || args.averages > 0) {
    constexpr int32_t kThreads = 128;
    const int64_t blocks = ceil_div(args.count * args.width, int64_t{kThreads});
    render_layers_kernel<Pixel><<<static_cast<uint32_t>(blocks < kMaxSetupBlocks ? blocks : kMaxSetupBlocks),
                                  kThreads, 0, stream>>>(args, static_cast<Pixel*>(d_out));
    KILN_CUDA_CHECK(cudaGetLastError());
  }
  return Status::ok();
}

}  // namespace

size_t render_scratch_bytes(const RenderParams& params, int64_t count, int32_t seq_len) {
  const size_t per_window = chart_style_draws_bars(params.style)
                                ? static_cast<size_t>(seq_len) * sizeof(OhlcBar)
                                : static_cast<size_t>(seq_len - 1) * sizeof(KilnSegment);
  return ranges_bytes(count) + align_up(static_cast<size_t>(count) * per_window, kScratchAlign);
}

Status launch_render(const RenderParams& params, const DeviceWindows& windows, void* d_out, cudaStream_t stream) {
  if (windows.count <= 0) return Status::ok();
  RenderArgs args{};
  args.series = windows.series;
  args.starts = windows.starts;
  args.count = windows.count;
  args.channels = windows.channels;
  args.seq_len = windows.seq_len;
  args.width = params.width;
  args.height = params.height;
  args.price_height = render_price_rows(params);
  args.parts = params.bar_gap ? 4 : 3;
  const int32_t price_channels = windows.channels - render_layer_channels(params);
  args.volume_lane = params.volume ? price_channels : -1;
  args.volume_rows = render_volume_rows(params);
  args.average_lane = price_channels + (params.volume ? 1 : 0);
  args.averages = params.moving_averages;
  args.ohlc = chart_style_draws_bars(params.style) ? 1 : 0;
  args.candle = params.style == ChartStyle::kCandlestick ? 1 : 0;
  args.line_width = params.line_width;
  args.background = static_cast<float>(params.background);
  args.ink = static_cast<float>(params.ink);
  args.ink_bullish = static_cast<float>(params.ink_bullish);
  args.ink_bearish = static_cast<float>(params.ink_bearish);
  const RenderLayerInks inks = render_layer_inks(params);
  args.volume_up = static_cast<float>(inks.volume_up);
  args.volume_down = static_cast<float>(inks.volume_down);
  for (int32_t m = 0; m < kMaxMovingAverageLines; ++m) args.average_inks[m] = static_cast<float>(inks.averages[m]);
  auto* scratch = static_cast<uint8_t*>(windows.scratch);
  args.ranges = reinterpret_cast<WindowRange*>(scratch);
  args.segments = reinterpret_cast<KilnSegment*>(scratch + ranges_bytes(windows.count));
  args.bars = reinterpret_cast<OhlcBar*>(scratch + ranges_bytes(windows.count));

  if (fault_should_fail(FaultSite::kLaunch)) {
    return Status(Errc::kDeviceError, "render setup kernel launch failed (injected by KILN_FAULT)");
  }
  const auto setup_blocks = static_cast<uint32_t>(windows.count < kMaxSetupBlocks ? windows.count : kMaxSetupBlocks);
  render_setup_kernel<<<setup_blocks, kSetupThreads, 0, stream>>>(args);
  KILN_CUDA_CHECK(cudaGetLastError());

  if (params.dtype == PixelType::kF32) return launch_render_kernel<float>(args, d_out, stream);
  return launch_render_kernel<uint8_t>(args, d_out, stream);
}

Status render_kernels_check() {
  cudaFuncAttributes attributes{};
  KILN_CUDA_CHECK(cudaFuncGetAttributes(&attributes, render_setup_kernel));
  KILN_CUDA_CHECK(cudaFuncGetAttributes(&attributes, render_line_kernel<uint8_t>));
  KILN_CUDA_CHECK(cudaFuncGetAttributes(&attributes, render_line_kernel<float>));
  KILN_CUDA_CHECK(cudaFuncGetAttributes(&attributes, render_ohlc_kernel<uint8_t>));
  KILN_CUDA_CHECK(cudaFuncGetAttributes(&attributes, render_ohlc_kernel<float>));
  KILN_CUDA_CHECK(cudaFuncGetAttributes(&attributes, render_layers_kernel<uint8_t>));
  KILN_CUDA_CHECK(cudaFuncGetAttributes(&attributes, render_layers_kernel<float>));
  return Status::ok();
}

}  // namespace kiln
