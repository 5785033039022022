// The series-encoding loops, built once per CPU variant (series_encoding_generic.cpp, series_encoding_avx2.cpp; flags
// per file in src/CMakeLists.txt) inside the namespace KILN_ENCODING_VARIANT names: per image, each row's loop over
// columns is specialised by kind (and for an n-wide image, by contiguous columns) so the compiler vectorises it.
// Every variant evaluates the same IEEE operations (-ffp-contract=off): their images are identical.
#include <cstring>
#include <vector>

#include "ops/series_encoding.h"

namespace kiln::KILN_ENCODING_VARIANT {

namespace {

// Inlined always: a call in the row loop would keep it from vectorising.
template <int Kind>
[[gnu::always_inline]] inline float level(const float* row, int32_t i, int32_t j, const KilnEncodingParams& p) {
  KilnEncodingParams q = p;
  q.kind = Kind;
  return kiln_encoding_level(row, i, j, q);
}

// The row's levels into `levels` (a loop the compiler vectorises), then stored: float32 level / 255, or uint8 by
// kiln_u8_from_float's rounding (the level is already clamped to 0..255, so without its NaN branch).
template <int Kind, bool Identity>
void fill_row(const float* row, int32_t i, const int32_t* columns, const KilnEncodingParams& p, int32_t width,
              float* levels, void* out) {
  for (int32_t x = 0; x < width; ++x) levels[x] = level<Kind>(row, i, Identity ? x : columns[x], p);
  if (p.as_float) {
    auto* o = static_cast<float*>(out);
    for (int32_t x = 0; x < width; ++x) o[x] = levels[x] / 255.0f;
    return;
  }
  auto* o = static_cast<uint8_t*>(out);
  for (int32_t x = 0; x < width; ++x) o[x] = static_cast<uint8_t>(static_cast<int32_t>(levels[x] + 0.5f));
}

template <int Kind>
void fill_image(const float* row, const KilnEncodingParams& p, const std::vector<int32_t>& columns,
                std::vector<float>& levels, const ImageView& out) {
  const bool identity = out.width == p.n;
  levels.resize(static_cast<size_t>(out.width));
  for (int32_t y = 0; y < out.height; ++y) {
    const int32_t i = kiln_encoding_index(y, out.height, p.n);
    void* dst = static_cast<uint8_t*>(out.data) + static_cast<int64_t>(y) * out.row_stride;
    if (identity) {
      fill_row<Kind, true>(row, i, columns.data(), p, out.width, levels.data(), dst);
    } else {
      fill_row<Kind, false>(row, i, columns.data(), p, out.width, levels.data(), dst);
    }
  }
}

// MTF rows depend on row i only through its bin: each bin's row is computed once, then copied.
void fill_mtf_image(const float* row, const KilnEncodingParams& p, const std::vector<int32_t>& columns,
                    std::vector<float>& levels, const ImageView& out) {
  const size_t row_bytes = static_cast<size_t>(out.width) * (p.as_float ? sizeof(float) : 1);
  std::vector<const uint8_t*> done(static_cast<size_t>(p.bins), nullptr);
  levels.resize(static_cast<size_t>(out.width));
  for (int32_t y = 0; y < out.height; ++y) {
    const int32_t i = kiln_encoding_index(y, out.height, p.n);
    const auto bin = static_cast<size_t>(row[i]);
    uint8_t* dst = static_cast<uint8_t*>(out.data) + static_cast<int64_t>(y) * out.row_stride;
    if (done[bin] != nullptr) {
      std::memcpy(dst, done[bin], row_bytes);
      continue;
    }
    fill_row<KILN_ENCODING_MTF, false>(row, i, columns.data(), p, out.width, levels.data(), dst);
    done[bin] = dst;
  }
}

struct Scratch {
  std::vector<float> row;
  std::vector<int32_t> columns;
  std::vector<float> levels;
};

void encode_window(const KilnEncodingParams& p, const ImageView& window, const ImageView& out, Scratch& scratch) {
  std::vector<float>& row = scratch.row;
  std::vector<int32_t>& columns = scratch.columns;
  row.resize(static_cast<size_t>(p.row_floats));
  encoding_prepare(p, window, row.data());
  columns.resize(static_cast<size_t>(out.width));
  for (int32_t x = 0; x < out.width; ++x) columns[static_cast<size_t>(x)] = kiln_encoding_index(x, out.width, p.n);
  switch (p.kind) {
    case KILN_ENCODING_GASF: fill_image<KILN_ENCODING_GASF>(row.data(), p, columns, scratch.levels, out); break;
    case KILN_ENCODING_GADF: fill_image<KILN_ENCODING_GADF>(row.data(), p, columns, scratch.levels, out); break;
    case KILN_ENCODING_MTF: fill_mtf_image(row.data(), p, columns, scratch.levels, out); break;
    default: fill_image<KILN_ENCODING_RP>(row.data(), p, columns, scratch.levels, out); break;
  }
}

}  // namespace

void encode_windows(const KilnEncodingParams& p, const VarShapeBatchView& windows, const VarShapeBatchView& images,
                    int64_t begin, int64_t end) {
  Scratch scratch;
  for (int64_t i = begin; i < end; ++i) encode_window(p, windows[i], images[i], scratch);
}

}  // namespace kiln::KILN_ENCODING_VARIANT
