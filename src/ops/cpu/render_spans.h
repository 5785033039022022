// The span path of the CPU renderer, included by render_loops.h once per ISA variant (inside its unnamed namespace,
// after level_to_pixel): uint8 gray bar charts (OHLC or candlesticks) whose every pixel column is one whole
// sub-column (width = parts * days: JKX's 3 px a day), at most 64 x 64, with their volume panel and moving averages.
// Every column then holds at most one span of rows per layer: the bar part, the volume bar, each average's rows
// (its two segments at a day's column both contain the day's row, so their union is one span). The image is built
// a row at a time from the spans, 64 lanes in byte vectors, instead of writing each column's pixels with loops whose
// lengths vary (most of the time went to their mispredicted exits), and every pixel is written once (no separate
// clear). Same pixels as render_ohlc_image + render_layers (a later layer wins); the scalar reference variant keeps
// those loops, and tests/ops/render_spans_test.cpp compares the two.
#if defined(__AVX2__)
#include <immintrin.h>
#endif

constexpr int32_t kSpanLanes = 64;
constexpr int32_t kMaxSpanAverages = 4;
constexpr int32_t kMaxSpanChannels = 5 + kMaxSpanAverages;  // OHLC, volume, averages
constexpr int32_t kMaxSpanDays = kSpanLanes / 3;
// A register of signed bytes (GCC's vector extensions; the native width, which GCC 12 compares in single
// instructions, unlike wider types): lanes (columns) of a row, compared as rows and selected as inks.
#if defined(__AVX2__)
constexpr int32_t kSpanVectorLanes = 32;
#else
constexpr int32_t kSpanVectorLanes = 16;
#endif
using SpanVector = int8_t __attribute__((vector_size(kSpanVectorLanes)));

template <typename Byte>
inline SpanVector span_load(const Byte* lanes) {
  SpanVector v;
  std::memcpy(&v, lanes, sizeof(v));
  return v;
}
inline SpanVector span_splat(int32_t value) { return SpanVector{} + static_cast<int8_t>(value); }

struct SpanScratch {
  // Per column: rows [top, bottom] of the bar part, of each average, and of the volume bar [top, height).
  alignas(64) int8_t bar_top[kSpanLanes], bar_bottom[kSpanLanes];
  alignas(64) int8_t average_top[kMaxSpanAverages][kSpanLanes], average_bottom[kMaxSpanAverages][kSpanLanes];
  alignas(64) int8_t volume_top[kSpanLanes];
  alignas(64) uint8_t bar_ink[kSpanLanes], volume_ink[kSpanLanes];
  // Per value of the window: its row (kiln_ohlc_row); per day: the column of its centre.
  int32_t value_rows[kMaxSpanDays * kMaxSpanChannels];
  int32_t day_columns[kMaxSpanDays];
};

inline bool span_path_applies(const kiln::RenderParams& p, int32_t n) {
  const int32_t parts = p.bar_gap ? 4 : 3;
  return p.dtype == kiln::PixelType::kU8 && kiln::chart_style_draws_bars(p.style) && p.width == parts * n &&
         p.width <= kSpanLanes && p.height <= kSpanLanes && p.moving_averages <= kMaxSpanAverages;
}

// Rows of column x0 + j of the 1-px aliased segment from (x0, y0) to (x1, y1) (kiln_aliased_rows), widened into
// top[x0 + j], bottom[x0 + j]: the same incremental steps as kiln::cpu::aliased_segment_draw, keeping each column's
// first and last row instead of setting its pixels.
inline void aliased_segment_spans(int32_t x0, int32_t y0, int32_t x1, int32_t y1, int8_t* top, int8_t* bottom) {
  const auto widen = [&](int32_t column, int32_t lo, int32_t hi) {
    top[column] = static_cast<int8_t>(kiln_mini(top[column], lo));
    bottom[column] = static_cast<int8_t>(kiln_maxi(bottom[column], hi));
  };
  const int32_t dx = x1 - x0;
  const int32_t dy = y1 - y0;
  const int32_t ady = dy < 0 ? -dy : dy;
  if (dx < 0) return;
  if (ady <= dx) {
    const int32_t den = 2 * dx;
    int32_t q = 0;
    int32_t r = dx;
    for (int32_t j = 0; j <= dx; ++j) {
      widen(x0 + j, y0 + q, y0 + q);
      r += 2 * dy;
      if (r >= den) {
        r -= den;
        ++q;
      } else if (r < 0) {
        r += den;
        --q;
      }
    }
    return;
  }
  const int32_t sign = dy < 0 ? -1 : 1;
  if (dx == 0) {
    widen(x0, kiln_mini(y0, y1), kiln_maxi(y0, y1));
    return;
  }
  const int32_t den = 2 * dx;
  // One division: ady = q den + rest, so 2 ady / den = 2 q + (rest >= dx) and ceil(ady / den) = q + (rest > 0).
  const int32_t q = ady / den;
  const int32_t rest = ady - q * den;
  const int32_t a = 2 * q + (rest >= dx ? 1 : 0);
  const int32_t b = 2 * ady - a * den;
  int32_t next = q + (rest > 0 ? 1 : 0);
  int32_t r = next * den - ady;
  int32_t lo = 0;
  for (int32_t j = 0; j <= dx; ++j) {
    const int32_t hi = next - 1 < ady ? next - 1 : ady;
    if (lo <= hi) sign > 0 ? widen(x0 + j, y0 + lo, y0 + hi) : widen(x0 + j, y0 - hi, y0 - lo);
    lo = next;
    next += a;
    r -= b;
    if (r < 0) {
      r += den;
      ++next;
    }
  }
}

// The finite check and price range of chart_range for bar windows: min and max over the four prices and the
// averages, every channel finite. The window is read flat, 8 values at a time into per-lane minima and maxima
// (AVX2): chunk k goes to accumulator k % channels, so lane l of accumulator a always holds channel
// (8a + l) % channels. The order of the comparisons differs from chart_range's, which can change only the sign of
// a zero minimum or maximum, and no row depends on that sign. A value is finite when v - v is 0; the sum of those
// is 0 when all are.
constexpr int32_t kRangeLanes = 8;

inline bool span_chart_range(const float* window, int32_t channels, int32_t n, int32_t first_average, float* vmin,
                             float* vmax) {
  const auto counts = [&](int32_t channel) { return channel < 4 || channel >= first_average; };
  const int32_t total = channels * n;
  float low = INFINITY;
  float high = -INFINITY;
  float sum = 0.0f;
  int32_t k = 0;
#if defined(__AVX2__)
  __m256 lo[kMaxSpanChannels];
  __m256 hi[kMaxSpanChannels];
  __m256 probe = _mm256_setzero_ps();
  for (int32_t a = 0; a < channels; ++a) {
    lo[a] = _mm256_set1_ps(INFINITY);
    hi[a] = _mm256_set1_ps(-INFINITY);
  }
  for (int32_t a = 0; k + kRangeLanes <= total; k += kRangeLanes, a = a + 1 == channels ? 0 : a + 1) {
    const __m256 v = _mm256_loadu_ps(window + k);
    lo[a] = _mm256_min_ps(lo[a], v);
    hi[a] = _mm256_max_ps(hi[a], v);
    probe = _mm256_add_ps(probe, _mm256_sub_ps(v, v));
  }
  alignas(32) float lanes_lo[kMaxSpanChannels][kRangeLanes];
  alignas(32) float lanes_hi[kMaxSpanChannels][kRangeLanes];
  alignas(32) float lanes_probe[kRangeLanes];
  for (int32_t a = 0; a < channels; ++a) {
    _mm256_store_ps(lanes_lo[a], lo[a]);
    _mm256_store_ps(lanes_hi[a], hi[a]);
  }
  _mm256_store_ps(lanes_probe, probe);
  for (int32_t a = 0, channel = 0; a < channels; ++a) {
    for (int32_t l = 0; l < kRangeLanes; ++l, channel = channel + 1 == channels ? 0 : channel + 1) {
      if (!counts(channel)) continue;
      low = kiln_minf(low, lanes_lo[a][l]);
      high = kiln_maxf(high, lanes_hi[a][l]);
    }
  }
  for (int32_t l = 0; l < kRangeLanes; ++l) sum += lanes_probe[l];
#endif
  for (int32_t channel = k % channels; k < total; ++k, channel = channel + 1 == channels ? 0 : channel + 1) {
    const float v = window[k];
    sum += v - v;
    if (counts(channel)) {
      low = kiln_minf(low, v);
      high = kiln_maxf(high, v);
    }
  }
  *vmin = low;
  *vmax = high;
  return sum == 0.0f;
}

// kiln_ohlc_row of every value of the window (flat: 8 at a time in AVX2), clamped before the conversion so the
// volume channel's rows, never used, stay defined; the same rows as kiln_ohlc_row for the prices and averages.
inline void span_value_rows(const float* window, int32_t total, float vmin, float vmax, int32_t h, int32_t* rows) {
  const float span = vmax - vmin;
  const float h1 = static_cast<float>(h - 1);
  int32_t k = 0;
  if (!(span > 0.0f)) {
    for (; k < total; ++k) rows[k] = kiln_ohlc_row(vmin, vmin, vmax, h);
    return;
  }
#if defined(__AVX2__)
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 half = _mm256_set1_ps(0.5f);
  const __m256 low = _mm256_set1_ps(vmin);
  const __m256 spans = _mm256_set1_ps(span);
  const __m256 last = _mm256_set1_ps(h1);
  for (; k + kRangeLanes <= total; k += kRangeLanes) {
    const __m256 norm = _mm256_div_ps(_mm256_sub_ps(_mm256_loadu_ps(window + k), low), spans);
    const __m256 y = _mm256_mul_ps(_mm256_sub_ps(one, norm), last);
    const __m256 row = _mm256_floor_ps(_mm256_add_ps(y, half));
    const __m256 clamped = _mm256_min_ps(_mm256_max_ps(row, _mm256_setzero_ps()), last);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(rows + k), _mm256_cvttps_epi32(clamped));
  }
#endif
  for (; k < total; ++k) {
    const float y = (1.0f - (window[k] - vmin) / span) * h1;
    rows[k] = static_cast<int32_t>(kiln_clampf(kiln_floorf(y + 0.5f), 0.0f, h1));
  }
}

// One image of the span path (span_path_applies).
inline void render_span_image(const kiln::RenderParams& p, const float* window, int32_t channels, int32_t n,
                              uint8_t* image, SpanScratch& s) {
  const int32_t w = p.width;
  const int32_t height = p.height;
  const auto background = static_cast<uint8_t>(p.background);
  const int32_t averages = p.moving_averages;
  const int32_t first_average = channels - averages;
  float vmin = 0.0f;
  float vmax = 0.0f;
  if (!span_chart_range(window, channels, n, first_average, &vmin, &vmax)) {
    std::memset(image, background, static_cast<size_t>(w) * height);
    return;
  }
  const int32_t h = kiln::render_price_rows(p);
  const float bg = static_cast<float>(p.background);
  const uint8_t bullish = level_to_pixel<uint8_t>(bg + (static_cast<float>(p.ink_bullish) - bg));
  const uint8_t bearish = level_to_pixel<uint8_t>(bg + (static_cast<float>(p.ink_bearish) - bg));
  const kiln::RenderLayerInks inks = kiln::render_layer_inks(p);
  const int32_t parts = p.bar_gap ? 4 : 3;
  const int32_t candle = p.style == kiln::ChartStyle::kCandlestick ? 1 : 0;
  const float sx = static_cast<float>(w) / static_cast<float>(parts * n);
  const float x_step = kiln_line_x_step(w, n);

  const int32_t values = channels;
  int32_t* rows = s.value_rows;
  span_value_rows(window, channels * n, vmin, vmax, h, rows);
  for (int32_t i = 0; i < n; ++i) s.day_columns[i] = kiln_day_column(i, 1, parts, sx, x_step, w);

  // The spans of every column; lanes past the width stay empty.
  for (int32_t c = 0; c < kSpanLanes; ++c) {
    s.bar_top[c] = kSpanLanes;
    s.bar_bottom[c] = -1;
    s.volume_top[c] = kSpanLanes;
    s.bar_ink[c] = background;
    s.volume_ink[c] = background;
  }
  for (int32_t m = 0; m < averages; ++m) {
    for (int32_t c = 0; c < kSpanLanes; ++c) {
      s.average_top[m][c] = kSpanLanes;
      s.average_bottom[m][c] = -1;
    }
  }
  for (int32_t i = 0; i < n; ++i) {
    const int32_t* r = rows + i * values;
    const float* day = window + static_cast<int64_t>(i) * channels;
    const uint8_t ink = day[3] >= day[0] ? bullish : bearish;
    for (int32_t part = 0; part < 3; ++part) {  // part 3, the gap, stays empty
      int32_t top = 0;
      int32_t bottom = 0;
      kiln_bar_part_rows(part, candle, r[0], r[1], r[2], r[3], &top, &bottom);
      const int32_t c = i * parts + part;
      s.bar_top[c] = static_cast<int8_t>(top);
      s.bar_bottom[c] = static_cast<int8_t>(bottom);
      s.bar_ink[c] = ink;
    }
  }
  if (p.volume) {
    const int32_t lane = 4;
    const auto up = level_to_pixel<uint8_t>(static_cast<float>(inks.volume_up));
    const auto down = level_to_pixel<uint8_t>(static_cast<float>(inks.volume_down));
    float largest = 0.0f;
    for (int32_t i = 0; i < n; ++i) largest = kiln_maxf(largest, window[static_cast<int64_t>(i) * channels + lane]);
    const int32_t volume_rows = kiln::render_volume_rows(p);
    for (int32_t i = 0; i < n; ++i) {
      const float* day = window + static_cast<int64_t>(i) * channels;
      const int32_t c = s.day_columns[i];
      s.volume_top[c] = static_cast<int8_t>(height - kiln_volume_rows(day[lane], largest, volume_rows));
      s.volume_ink[c] = kiln_day_bullish(1, i, day[0], day[3], day[3]) != 0 ? up : down;
    }
  }
  int32_t average_inks[kMaxSpanAverages];
  for (int32_t m = 0; m < averages; ++m) {
    average_inks[m] = level_to_pixel<uint8_t>(static_cast<float>(inks.averages[static_cast<size_t>(m)]));
    for (int32_t k = 1; k < n; ++k) {
      aliased_segment_spans(s.day_columns[k - 1], rows[(k - 1) * values + first_average + m], s.day_columns[k],
                            rows[k * values + first_average + m], s.average_top[m], s.average_bottom[m]);
    }
  }

  // The rows: price rows from the bars and averages, the rest (gap and volume panel) from the volume bars, each
  // built in 64 lanes, a register of them at a time, and stored whole where the image has room past it (the next
  // row overwrites the excess). Only > compares (pcmpgtb): top <= y is y + 1 > top, y <= bottom is bottom + 1 > y.
  for (int32_t c = 0; c < kSpanLanes; ++c) s.bar_bottom[c] = static_cast<int8_t>(s.bar_bottom[c] + 1);
  for (int32_t m = 0; m < averages; ++m) {
    for (int32_t c = 0; c < kSpanLanes; ++c) s.average_bottom[m][c] = static_cast<int8_t>(s.average_bottom[m][c] + 1);
  }
  const int64_t pixels = static_cast<int64_t>(w) * height;
  for (int32_t y = 0; y < height; ++y) {
    alignas(64) int8_t row[kSpanLanes];
    const SpanVector row_y = span_splat(y);
    const SpanVector row_y_next = span_splat(y + 1);
    for (int32_t lane = 0; lane < kSpanLanes; lane += kSpanVectorLanes) {
      SpanVector value;
      if (y < h) {
        const SpanVector on = (row_y_next > span_load(s.bar_top + lane)) & (span_load(s.bar_bottom + lane) > row_y);
        value = on ? span_load(s.bar_ink + lane) : span_splat(background);
        for (int32_t m = 0; m < averages; ++m) {
          const SpanVector on_average = (row_y_next > span_load(s.average_top[m] + lane)) &
                                        (span_load(s.average_bottom[m] + lane) > row_y);
          value = on_average ? span_splat(average_inks[m]) : value;
        }
      } else {
        const SpanVector on = row_y_next > span_load(s.volume_top + lane);
        value = on ? span_load(s.volume_ink + lane) : span_splat(background);
      }
      std::memcpy(row + lane, &value, sizeof(value));
    }
    uint8_t* out = image + static_cast<int64_t>(y) * w;
    if (static_cast<int64_t>(y) * w + kSpanLanes <= pixels) {
      std::memcpy(out, row, kSpanLanes);
    } else {
      std::memcpy(out, row, static_cast<size_t>(w));
    }
  }
}
