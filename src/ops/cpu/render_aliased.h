// The CPU's kiln_aliased_rows (render_px.h) without 64-bit integer divisions: the moving-average lines of the CPU
// renderer call it for every column of every segment, where the divisions were most of the layers' time.
#pragma once

#include <cmath>
#include <cstdint>

#include "ops/render_px.h"

namespace kiln::cpu {
// Internal to each file that includes it: the ISA variants build it with different instruction sets, so one
// variant's copy must not stand in for another's at link time.
namespace {

// floor(a / b) for b > 0 and |a| < 2^53, in double precision: the rounded quotient is within |a / b| * 2^-53 of
// a / b, less than 1 / b, while a / b lies at least 1 / b below the next integer (or on one, exactly), so its floor
// is kiln_floor_div64(a, b).
inline int64_t floor_div_exact(int64_t a, int64_t b) {
  return static_cast<int64_t>(std::floor(static_cast<double>(a) / static_cast<double>(b)));
}

// kiln_aliased_rows(c, x0, y0, x1, y1, lo, hi), the same rows (tests/ops/render_aliased_test.cpp); end points within
// the image (|coordinates| < 2^15), so every numerator is far below 2^53.
inline void aliased_rows(int32_t c, int32_t x0, int32_t y0, int32_t x1, int32_t y1, int32_t* lo, int32_t* hi) {
  const int64_t dx = static_cast<int64_t>(x1) - x0;
  const int64_t dy = static_cast<int64_t>(y1) - y0;
  const int64_t ady = dy < 0 ? -dy : dy;
  const int64_t j = static_cast<int64_t>(c) - x0;
  *lo = 0;
  *hi = -1;
  if (c < x0 || c > x1) return;
  if (ady <= dx) {
    const int32_t row = dx == 0 ? y0 : y0 + static_cast<int32_t>(floor_div_exact(2 * dy * j + dx, 2 * dx));
    *lo = row;
    *hi = row;
    return;
  }
  int64_t t_lo = 0;
  int64_t t_hi = ady;
  if (dx > 0) {
    t_lo = -floor_div_exact(-(2 * j - 1) * ady, 2 * dx);
    t_hi = -floor_div_exact(-(2 * j + 1) * ady, 2 * dx) - 1;
    t_lo = t_lo < 0 ? 0 : t_lo;
    t_hi = t_hi > ady ? ady : t_hi;
  }
  if (t_lo > t_hi) return;
  if (dy < 0) {
    *lo = static_cast<int32_t>(y0 - t_hi);
    *hi = static_cast<int32_t>(y0 - t_lo);
  } else {
    *lo = static_cast<int32_t>(y0 + t_lo);
    *hi = static_cast<int32_t>(y0 + t_hi);
  }
}

}  // namespace
}  // namespace kiln::cpu
