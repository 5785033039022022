/* Per-pixel math of the matte family (C subset; see kernel_defs.h), shared verbatim by the CPU, CUDA and OpenCL.
 *
 * Output pixel (x, y) of an out_w x out_h matte samples the probability map (f32, 1 channel) bilinearly at
 * half-pixel centres over the region: u = clamp(rx + (x + 0.5) * (rw / out_w) - 0.5, 0, in_w - 1), the same along
 * y; the two source columns are each blended vertically first, then the pair horizontally (the order the CPU's
 * row loop uses: one vertical blend per source column serves a whole output row). The value then becomes a mask
 * byte (p >= threshold: foreground, else background) or an alpha byte (the feather band ramped to 0..255, rounded).
 * A composite blends the frame over the background by that alpha. A person pixel (the counts): a mask's foreground,
 * an alpha of 128 or more. */
#ifndef KILN_OPS_MATTE_PX_H
#define KILN_OPS_MATTE_PX_H

#include "ops/image_px.h"

/* Resolved parameters of one call (the same on every backend; passed by value to kernels). */
typedef struct KilnMatteParams {
  int32_t alpha;      /* 0: mask, 1: alpha (alpha and composite) */
  int32_t composite;  /* 1: the alpha blends a frame over a background */
  int32_t foreground; /* mask: 0..255, not the background */
  int32_t background;
  float threshold;
  float alpha_low;    /* alpha: (p - alpha_low) * alpha_scale, clamped to [0, 1] */
  float alpha_scale;
  float region_x, region_y, region_width, region_height; /* width or height <= 0: the whole map */
} KilnMatteParams;

/* The region of a map of in_w x in_h: {x, y, width, height}. */
KILN_KERNEL_FN void kiln_matte_region(KilnMatteParams p, int32_t in_w, int32_t in_h, float* r) {
  const int32_t whole = p.region_width <= 0.0f || p.region_height <= 0.0f;
  r[0] = whole ? 0.0f : p.region_x;
  r[1] = whole ? 0.0f : p.region_y;
  r[2] = whole ? (float)in_w : p.region_width;
  r[3] = whole ? (float)in_h : p.region_height;
}

/* A vertically blended source column: rows y0 and y1 of column x, weight wy on y1. */
KILN_KERNEL_FN float kiln_matte_column(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t x, int32_t y0,
                                       int32_t y1, float wy) {
  const float a = kiln_px_load(base, d, x, y0, 0);
  const float b = kiln_px_load(base, d, x, y1, 0);
  return a + (b - a) * wy;
}

/* The byte of a probability. */
KILN_KERNEL_FN uint8_t kiln_matte_byte(float p, KilnMatteParams m) {
  if (!m.alpha) return p >= m.threshold ? (uint8_t)m.foreground : (uint8_t)m.background;
  const float a = kiln_clampf((p - m.alpha_low) * m.alpha_scale, 0.0f, 1.0f);
  return (uint8_t)(a * 255.0f + 0.5f);
}

/* 1 when a matte byte is a person pixel. */
KILN_KERNEL_FN int32_t kiln_matte_person(uint8_t byte, KilnMatteParams m) {
  return m.alpha ? byte >= 128 : byte == m.foreground;
}

/* Output pixel (x, y) of an out_w x out_h matte of the map `d`. */
KILN_KERNEL_FN uint8_t kiln_matte_at(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t out_w, int32_t out_h,
                                     int32_t x, int32_t y, KilnMatteParams m) {
  float r[4];
  kiln_matte_region(m, d.width, d.height, r);
  int32_t x0, x1, y0, y1;
  float wx, wy;
  kiln_px_linear_tap(x, out_w, r[0], r[2], d.width, &x0, &x1, &wx);
  kiln_px_linear_tap(y, out_h, r[1], r[3], d.height, &y0, &y1, &wy);
  const float c0 = kiln_matte_column(base, d, x0, y0, y1, wy);
  const float c1 = kiln_matte_column(base, d, x1, y0, y1, wy);
  return kiln_matte_byte(c0 + (c1 - c0) * wx, m);
}

/* A composite's channel: the frame's value over the background's by the weight alpha / 255 (`unit`, computed as
 * (float)alpha / 255.0f: the CPU takes it from a table of the 256 values), rounded; no fused multiply-add. */
KILN_KERNEL_FN uint8_t kiln_matte_blend_unit(uint8_t front, uint8_t back, float unit) {
  const float b = (float)back;
  return (uint8_t)(b + ((float)front - b) * unit + 0.5f);
}

KILN_KERNEL_FN uint8_t kiln_matte_blend(uint8_t front, uint8_t back, uint8_t alpha) {
  return kiln_matte_blend_unit(front, back, (float)alpha / 255.0f);
}

/* Composite pixel (x, y) with alpha `a`: the three channels of `frame` over `back` into `out` (u8 RGB HWC). */
KILN_KERNEL_FN void kiln_matte_composite_px(KILN_GLOBAL const uint8_t* frame_base, KilnImageDesc frame,
                                            KILN_GLOBAL const uint8_t* back_base, KilnImageDesc back,
                                            KILN_GLOBAL uint8_t* out_base, KilnImageDesc out, int32_t x, int32_t y,
                                            uint8_t a) {
  int32_t c;
  for (c = 0; c < 3; ++c) {
    out_base[kiln_px_offset(out, x, y, c)] = kiln_matte_blend(frame_base[kiln_px_offset(frame, x, y, c)],
                                                              back_base[kiln_px_offset(back, x, y, c)], a);
  }
}

#endif
