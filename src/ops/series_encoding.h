// Series encodings as images (the render op's gasf, gadf, mtf and rp styles): the per-window preparation every
// backend shares, done on the host in float64 (series_encoding_prepare.h), and the CPU implementation. The per-pixel
// math is in series_encoding_px.h.
//
// A window's values x are its closes (the only price channel, or the 4th of Open/High/Low/Close). Field cell (i, j)
// (image row i, column j; the image is resized to width x height by nearest cells) is:
//   GASF  x~_i x~_j - sqrt(1 - x~_i^2) sqrt(1 - x~_j^2)   (cos(phi_i + phi_j), phi = arccos x~)
//   GADF  sqrt(1 - x~_i^2) x~_j - x~_i sqrt(1 - x~_j^2)   (sin(phi_i - phi_j))
//   with x~ = (2 x - max - min) / (max - min), the window min-max rescaled to [-1, 1]; level (v + 1) * 127.5;
//   MTF   W[bin(x_i), bin(x_j)], W the Q x Q matrix of transitions bin(x_t) -> bin(x_t+1) over the window, each row
//         divided by its sum (a row without transitions stays 0); bin(x) = the number of edges e < x, the edges
//         being the k/Q quantiles of the window (k = 1..Q-1, linear interpolation: numpy.percentile) less any
//         within 1e-8 of the next (pyts' quantile KBinsDiscretizer: numpy.digitize(right=True));
//         level W * 255;
//   RP    |x_i - x_j|: with a threshold eps >= 0, 255 where it is <= eps, else 0; without, |x_i - x_j| /
//         (max - min) * 255.
// Levels are clamped to 0..255 and rounded half up for uint8; float32 images get level / 255.
// A constant window (max == min) has x~ = 0 (GASF 0, GADF 128), every value in bin 0 (MTF 255), distance 0
// (RP 0, binary 255); the render job skips such windows (counted with the NaN ones).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ops/render.h"
#include "ops/series_encoding_px.h"

namespace kiln {

class ThreadPool;

inline constexpr int32_t kMaxMtfBins = 64;

// The kernel parameters of a call on windows of n values.
KilnEncodingParams encoding_params(const RenderParams& params, int32_t n);

// Buffers encoding_prepare reuses from one window to the next: one per thread, so that a window allocates nothing.
struct EncodingScratch {
  std::vector<float> x;  // the window's closes
  std::vector<double> sorted;
  std::vector<int32_t> taken;  // the sorted places a value took
  std::vector<double> quantiles;
  std::vector<double> edges;
  std::vector<int32_t> bins;
  std::vector<double> counts;
};

// Window `window` (1 x n, 1 or 4 channels) -> its prepared row (p.row_floats floats).
void encoding_prepare(const KilnEncodingParams& p, const ImageView& window, float* row, EncodingScratch& scratch);

// Every window of a call prepared, row after row, and seen as one float32 host image of a row per window: what the
// GPU backends upload. `view` points into `floats` (kept where it is when the struct moves).
struct EncodingRows {
  EncodingRows() = default;
  EncodingRows(EncodingRows&&) = default;
  EncodingRows(const EncodingRows&) = delete;  // a copy's view would point into the original's floats
  EncodingRows& operator=(const EncodingRows&) = delete;

  KilnEncodingParams params;
  std::vector<float> floats;
  ImageView view;
  VarShapeBatchView batch() const { return {&view, 1, MemorySpace::kHost}; }
};
EncodingRows encoding_rows_prepare(const OpCall& call);

// The CPU implementation (the reference of the other backends): threads across windows.
Status series_encoding_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
