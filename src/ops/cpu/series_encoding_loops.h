// The series-encoding loops, built once per CPU variant (series_encoding_generic.cpp, series_encoding_avx2.cpp; flags
// per file in src/CMakeLists.txt) inside the namespace KILN_ENCODING_VARIANT names. Per window: the prepared row
// (ops/series_encoding_prepare.h, compiled here with the variant's flags), then one loop per image row over
// contiguous columns (their prepared values gathered once per image when the image is resized) that writes the
// pixels directly, with the row's values hoisted out of it: vectorised by the compiler, and for uint8 rows under
// AVX2 by intrinsics, 32 pixels a step. Every variant evaluates the operations of kiln_encoding_level in the same
// order (-ffp-contract=off): their images are identical, and identical to the GPU backends'.
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "ops/series_encoding.h"
#include "ops/series_encoding_prepare.h"

namespace kiln::KILN_ENCODING_VARIANT {

namespace {

enum class Field { kGasf, kGadf, kRpDistance, kRpBinary };

// Cell (i, j)'s level, clamped: kiln_encoding_level with row i's values (ai, bi) and column j's (aj, bj) passed in.
template <Field F>
[[gnu::always_inline]] inline float field_level(float ai, float bi, float aj, float bj, float scale, float threshold) {
  float level = 0.0f;
  if constexpr (F == Field::kGasf) {
    level = (ai * aj - bi * bj + 1.0f) * 127.5f;
  } else if constexpr (F == Field::kGadf) {
    level = (bi * aj - ai * bj + 1.0f) * 127.5f;
  } else if constexpr (F == Field::kRpDistance) {
    level = kiln_absf(ai - aj) * scale * 255.0f;
  } else {
    level = kiln_absf(ai - aj) <= threshold ? 255.0f : 0.0f;
  }
  return kiln_clampf(level, 0.0f, 255.0f);
}

// A clamped level stored: uint8 by kiln_u8_from_float's rounding (without its NaN branch: the clamp leaves none), or
// float32 level / 255.
[[gnu::always_inline]] inline void store(float level, uint8_t* out) {
  *out = static_cast<uint8_t>(static_cast<int32_t>(level + 0.5f));
}
[[gnu::always_inline]] inline void store(float level, float* out) { *out = level / 255.0f; }

template <Field F, typename Pixel>
void fill_row(const float* __restrict a, const float* __restrict b, float ai, float bi, float scale, float threshold,
              int32_t width, Pixel* __restrict out) {
  for (int32_t x = 0; x < width; ++x) store(field_level<F>(ai, bi, a[x], b[x], scale, threshold), out + x);
}

#if defined(__AVX2__)
// field_level and the uint8 store, 8 columns: the same operations (max_ps(v, 0) is `v > 0 ? v : 0`, min_ps(v, 255)
// is `v < 255 ? v : 255`; |d| by clearing the sign, which changes only -0 and NaN, both level 0 after the clamp).
template <Field F>
[[gnu::always_inline]] inline __m256i level_u8_x8(__m256 ai, __m256 bi, const float* a, const float* b, __m256 scale,
                                                 __m256 threshold) {
  const __m256 aj = _mm256_loadu_ps(a);
  __m256 level;
  if constexpr (F == Field::kGasf || F == Field::kGadf) {
    const __m256 bj = _mm256_loadu_ps(b);
    const __m256 v = F == Field::kGasf ? _mm256_sub_ps(_mm256_mul_ps(ai, aj), _mm256_mul_ps(bi, bj))
                                       : _mm256_sub_ps(_mm256_mul_ps(bi, aj), _mm256_mul_ps(ai, bj));
    level = _mm256_mul_ps(_mm256_add_ps(v, _mm256_set1_ps(1.0f)), _mm256_set1_ps(127.5f));
  } else {
    const __m256 d = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_sub_ps(ai, aj));
    if constexpr (F == Field::kRpDistance) {
      level = _mm256_mul_ps(_mm256_mul_ps(d, scale), _mm256_set1_ps(255.0f));
    } else {
      level = _mm256_and_ps(_mm256_cmp_ps(d, threshold, _CMP_LE_OQ), _mm256_set1_ps(255.0f));
    }
  }
  level = _mm256_min_ps(_mm256_max_ps(level, _mm256_setzero_ps()), _mm256_set1_ps(255.0f));
  return _mm256_cvttps_epi32(_mm256_add_ps(level, _mm256_set1_ps(0.5f)));
}

// uint8 rows 32 columns at a time (levels 0..255 packed without saturating), the rest by fill_row.
template <Field F>
void fill_row_u8(const float* __restrict a, const float* __restrict b, float ai, float bi, float scale,
                 float threshold, int32_t width, uint8_t* __restrict out) {
  const __m256 ai8 = _mm256_set1_ps(ai);
  const __m256 bi8 = _mm256_set1_ps(bi);
  const __m256 scale8 = _mm256_set1_ps(scale);
  const __m256 threshold8 = _mm256_set1_ps(threshold);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);  // undoes the packs' interleaving of 128-bit lanes
  int32_t x = 0;
  for (; x + 32 <= width; x += 32) {
    const __m256i l0 = level_u8_x8<F>(ai8, bi8, a + x, b + x, scale8, threshold8);
    const __m256i l1 = level_u8_x8<F>(ai8, bi8, a + x + 8, b + x + 8, scale8, threshold8);
    const __m256i l2 = level_u8_x8<F>(ai8, bi8, a + x + 16, b + x + 16, scale8, threshold8);
    const __m256i l3 = level_u8_x8<F>(ai8, bi8, a + x + 24, b + x + 24, scale8, threshold8);
    const __m256i bytes = _mm256_packus_epi16(_mm256_packs_epi32(l0, l1), _mm256_packs_epi32(l2, l3));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + x), _mm256_permutevar8x32_epi32(bytes, order));
  }
  fill_row<F>(a + x, b + x, ai, bi, scale, threshold, width - x, out + x);
}
#endif

template <Field F, typename Pixel>
void fill_pixels(const float* a, const float* b, float ai, float bi, float scale, float threshold, int32_t width,
                 Pixel* out) {
#if defined(__AVX2__)
  if constexpr (std::is_same_v<Pixel, uint8_t>) {
    fill_row_u8<F>(a, b, ai, bi, scale, threshold, width, out);
    return;
  }
#endif
  fill_row<F>(a, b, ai, bi, scale, threshold, width, out);
}

// The time index of every output row and column: the same for every window of a call.
struct Layout {
  int32_t n = -1;
  int32_t width = -1;
  int32_t height = -1;
  std::vector<int32_t> rows;
  std::vector<int32_t> columns;

  void fit(int32_t n_, const ImageView& out) {
    if (n_ == n && out.width == width && out.height == height) return;
    n = n_;
    width = out.width;
    height = out.height;
    rows.resize(static_cast<size_t>(height));
    columns.resize(static_cast<size_t>(width));
    for (int32_t y = 0; y < height; ++y) rows[static_cast<size_t>(y)] = kiln_encoding_index(y, height, n);
    for (int32_t x = 0; x < width; ++x) columns[static_cast<size_t>(x)] = kiln_encoding_index(x, width, n);
  }
  bool identity() const { return width == n; }  // column x shows cell x
};

struct Scratch {
  EncodingScratch prepare;
  Layout layout;
  std::vector<float> row;
  std::vector<float> column_a;  // a and b of each column's cell (resized images)
  std::vector<float> column_b;
  std::vector<int32_t> column_bins;  // MTF
  std::vector<uint8_t> mtf_u8;       // MTF: the Q x Q transition matrix's pixels
  std::vector<float> mtf_f32;
};

uint8_t* image_row(const ImageView& out, int32_t y) {
  return static_cast<uint8_t*>(out.data) + static_cast<int64_t>(y) * out.row_stride;
}

// A row copied 32 bytes at a time, inlined: a call of memcpy costs as much as copying a 64-byte row.
inline void copy_row(const uint8_t* __restrict from, size_t bytes, uint8_t* __restrict to) {
  size_t k = 0;
  for (; k + 32 <= bytes; k += 32) std::memcpy(to + k, from + k, 32);
  std::memcpy(to + k, from + k, bytes - k);
}

template <Field F, typename Pixel>
void fill_image(const float* row, const KilnEncodingParams& p, Scratch& scratch, const ImageView& out) {
  const Layout& layout = scratch.layout;
  const float* a = row;
  const float* b = row + p.n;
  if (!layout.identity()) {
    scratch.column_a.resize(static_cast<size_t>(out.width));
    scratch.column_b.resize(static_cast<size_t>(out.width));
    for (int32_t x = 0; x < out.width; ++x) {
      const int32_t j = layout.columns[static_cast<size_t>(x)];
      scratch.column_a[static_cast<size_t>(x)] = row[j];
      scratch.column_b[static_cast<size_t>(x)] = row[p.n + j];
    }
    a = scratch.column_a.data();
    b = scratch.column_b.data();
  }
  const float scale = row[2 * p.n];
  const size_t row_bytes = static_cast<size_t>(out.width) * sizeof(Pixel);
  for (int32_t y = 0; y < out.height; ++y) {
    const int32_t i = layout.rows[static_cast<size_t>(y)];
    uint8_t* dst = image_row(out, y);
    if (y > 0 && layout.rows[static_cast<size_t>(y - 1)] == i) {  // a taller image than the window repeats rows
      copy_row(image_row(out, y - 1), row_bytes, dst);
      continue;
    }
    fill_pixels<F>(a, b, row[i], row[p.n + i], scale, p.threshold, out.width, reinterpret_cast<Pixel*>(dst));
  }
}

std::vector<uint8_t>& mtf_pixels(Scratch& scratch, uint8_t*) { return scratch.mtf_u8; }
std::vector<float>& mtf_pixels(Scratch& scratch, float*) { return scratch.mtf_f32; }

// An MTF pixel depends on its row and column only through their bins: the Q x Q matrix's pixels are computed once,
// then each bin's row is looked up once and copied to the other rows of that bin.
template <typename Pixel>
void fill_mtf_image(const float* row, const KilnEncodingParams& p, Scratch& scratch, const ImageView& out) {
  const Layout& layout = scratch.layout;
  const int32_t bins = p.bins;
  std::vector<Pixel>& matrix = mtf_pixels(scratch, static_cast<Pixel*>(nullptr));
  matrix.resize(static_cast<size_t>(bins) * bins);
  const float* w = row + 2 * p.n + 1;
  for (int32_t k = 0; k < bins * bins; ++k) {
    store(kiln_clampf(KILN_ENCODING_MUL(w[k], 255.0f), 0.0f, 255.0f), &matrix[static_cast<size_t>(k)]);
  }
  std::vector<int32_t>& column_bins = scratch.column_bins;
  column_bins.resize(static_cast<size_t>(out.width));
  for (int32_t x = 0; x < out.width; ++x) {
    column_bins[static_cast<size_t>(x)] = static_cast<int32_t>(row[layout.columns[static_cast<size_t>(x)]]);
  }
  const size_t row_bytes = static_cast<size_t>(out.width) * sizeof(Pixel);
  const uint8_t* done[kMaxMtfBins] = {};
  for (int32_t y = 0; y < out.height; ++y) {
    const auto bin = static_cast<int32_t>(row[layout.rows[static_cast<size_t>(y)]]);
    uint8_t* dst = image_row(out, y);
    if (done[bin] != nullptr) {
      copy_row(done[bin], row_bytes, dst);
      continue;
    }
    const Pixel* from = matrix.data() + static_cast<size_t>(bin) * bins;
    auto* o = reinterpret_cast<Pixel*>(dst);
    for (int32_t x = 0; x < out.width; ++x) o[x] = from[column_bins[static_cast<size_t>(x)]];
    done[bin] = dst;
  }
}

template <typename Pixel>
void fill(const float* row, const KilnEncodingParams& p, Scratch& scratch, const ImageView& out) {
  switch (p.kind) {
    case KILN_ENCODING_GASF: fill_image<Field::kGasf, Pixel>(row, p, scratch, out); break;
    case KILN_ENCODING_GADF: fill_image<Field::kGadf, Pixel>(row, p, scratch, out); break;
    case KILN_ENCODING_MTF: fill_mtf_image<Pixel>(row, p, scratch, out); break;
    default:
      if (p.binary) {
        fill_image<Field::kRpBinary, Pixel>(row, p, scratch, out);
      } else {
        fill_image<Field::kRpDistance, Pixel>(row, p, scratch, out);
      }
  }
}

void encode_window(const KilnEncodingParams& p, const ImageView& window, const ImageView& out, Scratch& scratch) {
  scratch.row.resize(static_cast<size_t>(p.row_floats));
  encoding_prepare_window(p, window, scratch.row.data(), scratch.prepare);
  scratch.layout.fit(p.n, out);
  if (p.as_float) {
    fill<float>(scratch.row.data(), p, scratch, out);
  } else {
    fill<uint8_t>(scratch.row.data(), p, scratch, out);
  }
}

}  // namespace

void encode_windows(const KilnEncodingParams& p, const VarShapeBatchView& windows, const VarShapeBatchView& images,
                    int64_t begin, int64_t end) {
  Scratch scratch;
  for (int64_t i = begin; i < end; ++i) encode_window(p, windows[i], images[i], scratch);
}

}  // namespace kiln::KILN_ENCODING_VARIANT
