// Series encodings on the CPU: threads across windows; per image, each row's loop over columns is specialised by
// kind (and for an n-wide image, by contiguous columns) so the compiler vectorises it.
#include <vector>

#include "core/thread_pool.h"
#include "ops/series_encoding.h"

namespace kiln {

namespace {

template <int Kind>
float level(const float* row, int32_t i, int32_t j, const KilnEncodingParams& p) {
  KilnEncodingParams q = p;
  q.kind = Kind;
  return kiln_encoding_level(row, i, j, q);
}

template <int Kind, bool Identity>
void fill_row(const float* row, int32_t i, const int32_t* columns, const KilnEncodingParams& p, int32_t width,
              void* out) {
  if (p.as_float) {
    auto* o = static_cast<float*>(out);
    for (int32_t x = 0; x < width; ++x) o[x] = level<Kind>(row, i, Identity ? x : columns[x], p) / 255.0f;
    return;
  }
  auto* o = static_cast<uint8_t*>(out);
  // The level is already clamped to 0..255: kiln_u8_from_float's rounding without its NaN branch.
  for (int32_t x = 0; x < width; ++x) {
    o[x] = static_cast<uint8_t>(static_cast<int32_t>(level<Kind>(row, i, Identity ? x : columns[x], p) + 0.5f));
  }
}

template <int Kind>
void fill_image(const float* row, const KilnEncodingParams& p, const std::vector<int32_t>& columns, const ImageView& out) {
  const bool identity = out.width == p.n;
  for (int32_t y = 0; y < out.height; ++y) {
    const int32_t i = kiln_encoding_index(y, out.height, p.n);
    void* dst = static_cast<uint8_t*>(out.data) + static_cast<int64_t>(y) * out.row_stride;
    if (identity) {
      fill_row<Kind, true>(row, i, columns.data(), p, out.width, dst);
    } else {
      fill_row<Kind, false>(row, i, columns.data(), p, out.width, dst);
    }
  }
}

void encode_window(const KilnEncodingParams& p, const ImageView& window, const ImageView& out, std::vector<float>& row,
                   std::vector<int32_t>& columns) {
  row.resize(static_cast<size_t>(p.row_floats));
  encoding_prepare(p, window, row.data());
  columns.resize(static_cast<size_t>(out.width));
  for (int32_t x = 0; x < out.width; ++x) columns[static_cast<size_t>(x)] = kiln_encoding_index(x, out.width, p.n);
  switch (p.kind) {
    case KILN_ENCODING_GASF: fill_image<KILN_ENCODING_GASF>(row.data(), p, columns, out); break;
    case KILN_ENCODING_GADF: fill_image<KILN_ENCODING_GADF>(row.data(), p, columns, out); break;
    case KILN_ENCODING_MTF: fill_image<KILN_ENCODING_MTF>(row.data(), p, columns, out); break;
    default: fill_image<KILN_ENCODING_RP>(row.data(), p, columns, out); break;
  }
}

}  // namespace

Status series_encoding_cpu(const OpCall& call, ThreadPool* pool) {
  if (call.in.count == 0) return Status::ok();
  const auto& params = *static_cast<const RenderParams*>(call.params);
  const KilnEncodingParams p = encoding_params(params, call.in[0].width);
  parallel_for(pool, call.in.count, [&](int64_t begin, int64_t end) {
    std::vector<float> row;
    std::vector<int32_t> columns;
    for (int64_t i = begin; i < end; ++i) encode_window(p, call.in[i], call.out[i], row, columns);
  });
  return Status::ok();
}

}  // namespace kiln
