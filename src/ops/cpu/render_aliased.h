// The CPU's moving-average segments: the pixels of kiln_aliased_rows (render_px.h) for every column of a segment,
// without its 64-bit integer division per column (most of the layers' time when the CPU called it per column).
#pragma once

#include <cstdint>

#include "ops/render_px.h"

namespace kiln::cpu {
// Internal to each file that includes it: the ISA variants build it with different instruction sets, so one
// variant's copy must not stand in for another's at link time.
namespace {

// Sets the pixels of the 1-px aliased segment from (x0, y0) to (x1, y1), x0 <= x1, in `ink`: in column c the rows
// kiln_aliased_rows(c, x0, y0, x1, y1) gives, found incrementally along the segment (one division a segment, not
// one a column): a shallow segment's row y0 + floor((2 dy j + dx) / 2dx) as a quotient and remainder stepped by
// 2 dy; a steep one's rows of column j run from ceil((2j - 1) |dy| / 2dx) to ceil((2j + 1) |dy| / 2dx) - 1, the
// second bound stepped by 2 |dy| = a 2dx + b.
template <typename Pixel>
inline void aliased_segment_draw(int32_t x0, int32_t y0, int32_t x1, int32_t y1, Pixel* out, int64_t stride,
                                 Pixel ink) {
  const int64_t dx = static_cast<int64_t>(x1) - x0;
  const int64_t dy = static_cast<int64_t>(y1) - y0;
  const int64_t ady = dy < 0 ? -dy : dy;
  if (dx < 0) return;
  if (ady <= dx) {
    const int64_t den = 2 * dx;
    int64_t q = 0;
    int64_t r = dx;  // 2 dy j + dx = q den + r, 0 <= r < den (den = 0: the single column x0 at row y0)
    for (int64_t j = 0; j <= dx; ++j) {
      out[(y0 + q) * stride + x0 + j] = ink;
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
  const int64_t sign = dy < 0 ? -1 : 1;
  if (dx == 0) {
    for (int64_t t = 0; t <= ady; ++t) out[(y0 + sign * t) * stride + x0] = ink;
    return;
  }
  const int64_t den = 2 * dx;
  const int64_t a = 2 * ady / den;
  const int64_t b = 2 * ady - a * den;
  int64_t next = (ady + den - 1) / den;  // ceil((2j + 1) ady / den) = next, with remainder r: next den - r
  int64_t r = next * den - ady;
  int64_t lo = 0;
  for (int64_t j = 0; j <= dx; ++j) {
    const int64_t hi = next - 1 < ady ? next - 1 : ady;
    for (int64_t t = lo; t <= hi; ++t) out[(y0 + sign * t) * stride + x0 + j] = ink;
    lo = next;
    next += a;
    r -= b;
    if (r < 0) {
      r += den;
      ++next;
    }
  }
}

}  // namespace
}  // namespace kiln::cpu
