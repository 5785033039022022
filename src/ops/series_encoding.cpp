#include "ops/series_encoding.h"

#include <algorithm>

#include "ops/series_encoding_prepare.h"

namespace kiln {

namespace {

int32_t encoding_kind(ChartStyle style) {
  switch (style) {
    case ChartStyle::kGadf: return KILN_ENCODING_GADF;
    case ChartStyle::kMtf: return KILN_ENCODING_MTF;
    case ChartStyle::kRp: return KILN_ENCODING_RP;
    default: return KILN_ENCODING_GASF;
  }
}

}  // namespace

KilnEncodingParams encoding_params(const RenderParams& params, int32_t n) {
  KilnEncodingParams p{};
  p.kind = encoding_kind(params.style);
  p.n = n;
  p.bins = p.kind == KILN_ENCODING_MTF ? params.mtf_bins : 0;
  p.binary = p.kind == KILN_ENCODING_RP && params.rp_threshold >= 0.0f ? 1 : 0;
  p.threshold = params.rp_threshold;
  p.row_floats = kiln_encoding_row_floats(n, p.bins);
  p.as_float = params.dtype == PixelType::kF32 ? 1 : 0;
  return p;
}

void encoding_sort_values(const std::vector<float>& x, std::vector<double>& sorted) {
  sorted.assign(x.begin(), x.end());
  std::sort(sorted.begin(), sorted.end());
}

void encoding_prepare(const KilnEncodingParams& p, const ImageView& window, float* row, EncodingScratch& scratch) {
  encoding_prepare_window(p, window, row, scratch);
}

EncodingRows encoding_rows_prepare(const OpCall& call) {
  EncodingRows rows;
  rows.params = encoding_params(*static_cast<const RenderParams*>(call.params), call.in[0].width);
  const auto row_floats = static_cast<size_t>(rows.params.row_floats);
  rows.floats.resize(static_cast<size_t>(call.in.count) * row_floats);
  EncodingScratch scratch;
  for (int64_t i = 0; i < call.in.count; ++i) {
    encoding_prepare(rows.params, call.in[i], rows.floats.data() + static_cast<size_t>(i) * row_floats, scratch);
  }
  rows.view = image_view_packed(rows.floats.data(), rows.params.row_floats, static_cast<int32_t>(call.in.count), 1,
                                PixelType::kF32);
  return rows;
}

}  // namespace kiln
