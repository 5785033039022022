/* Per-pixel math of the color family (C subset; see kernel_defs.h): channel swap, gray with OpenCV's weights,
 * gray -> RGB, HWC <-> CHW, NV12 <-> RGB. One call writes every channel of output pixel (x, y); the layouts of `in`
 * and `out` come from their descriptors, so layout conversion is a plain copy between differently laid out images.
 *
 * Copies move the stored bits (u8 bytes, f16/f32 bit patterns), so they are exact for every value, NaN included.
 * Gray: u8 uses OpenCV 4's 15-bit fixed point (kiln_gray_u8 in image_px.h: bit-exact with cv::cvtColor);
 * f16/f32 use 0.299 / 0.587 / 0.114 in float, summed in memory order (channel 0 first), like OpenCV's scalar
 * path. */
#ifndef KILN_OPS_COLOR_PX_H
#define KILN_OPS_COLOR_PX_H

#include "ops/image_px.h"
#include "ops/yuv_px.h"

/* Values of ColorConversion (include/kiln/ops/color.h). */
#define KILN_COLOR_SWAP_RB 0
#define KILN_COLOR_RGB_TO_GRAY 1
#define KILN_COLOR_BGR_TO_GRAY 2
#define KILN_COLOR_GRAY_TO_RGB 3
#define KILN_COLOR_HWC_TO_CHW 4
#define KILN_COLOR_CHW_TO_HWC 5
#define KILN_COLOR_NV12_TO_RGB 6
#define KILN_COLOR_RGB_TO_NV12 7

/* OpenCV 4's u8 RGB2Gray fixed point (color_rgb.simd.hpp RY15/GY15/BY15, 15 bits, sum 32768); the older 14-bit
 * coefficients (4899, 9617, 1868) differ from cv::cvtColor 4.x by one level on ~0.3 % of random pixels. */

/* Copies channel ci of input pixel (x, y) to channel co of output pixel (x, y) (same pixel type). */
KILN_KERNEL_FN void kiln_color_copy(KILN_GLOBAL const uint8_t* in_base, KilnImageDesc in, KILN_GLOBAL uint8_t* out_base,
                                    KilnImageDesc out, int32_t x, int32_t y, int32_t ci, int32_t co) {
  const int64_t src = kiln_px_offset(in, x, y, ci);
  const int64_t dst = kiln_px_offset(out, x, y, co);
  if (in.type == KILN_PIXEL_U8) {
    out_base[dst] = in_base[src];
  } else if (in.type == KILN_PIXEL_F16) {
    *(KILN_GLOBAL uint16_t*)(out_base + dst) = *(KILN_GLOBAL const uint16_t*)(in_base + src);
  } else {
    *(KILN_GLOBAL uint32_t*)(out_base + dst) = *(KILN_GLOBAL const uint32_t*)(in_base + src);
  }
}

/* The stored bits of channel c of pixel (x, y) (u8, f16 or f32), and their store. */
KILN_KERNEL_FN uint32_t kiln_color_bits_load(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t x, int32_t y,
                                             int32_t c) {
  const int64_t at = kiln_px_offset(d, x, y, c);
  if (d.type == KILN_PIXEL_U8) return base[at];
  if (d.type == KILN_PIXEL_F16) return *(KILN_GLOBAL const uint16_t*)(base + at);
  return *(KILN_GLOBAL const uint32_t*)(base + at);
}

KILN_KERNEL_FN void kiln_color_bits_store(KILN_GLOBAL uint8_t* base, KilnImageDesc d, int32_t x, int32_t y, int32_t c,
                                          uint32_t bits) {
  const int64_t at = kiln_px_offset(d, x, y, c);
  if (d.type == KILN_PIXEL_U8) {
    base[at] = (uint8_t)bits;
  } else if (d.type == KILN_PIXEL_F16) {
    *(KILN_GLOBAL uint16_t*)(base + at) = (uint16_t)bits;
  } else {
    *(KILN_GLOBAL uint32_t*)(base + at) = bits;
  }
}

/* Gray of float channels 0, 1, 2 with weights w0, w1, w2 (the R/B order decides which is 0.299). */
KILN_KERNEL_FN float kiln_color_gray_f(float c0, float c1, float c2, float w0, float w1, float w2) {
  const float a = c0 * w0;
  const float b = c1 * w1;
  const float c = c2 * w2;
  return (a + b) + c;
}

/* Output pixel (x, y) of an NV12 input (the luma and chroma rows of one u8 view). */
KILN_KERNEL_FN void kiln_color_nv12_pixel(KILN_GLOBAL const uint8_t* in_base, KilnImageDesc in,
                                          KILN_GLOBAL uint8_t* out_base, KilnImageDesc out, KilnYuvConsts k,
                                          int32_t x, int32_t y) {
  int32_t rgb[3];
  int32_t c;
  kiln_nv12_rgb(in_base, in, k.chroma_row > 0 ? k.chroma_row : out.height, k, x, y, rgb);
  for (c = 0; c < 3; ++c) out_base[kiln_px_offset(out, x, y, c)] = (uint8_t)rgb[c];
}

/* Output byte (x, y) of an NV12 view from u8 RGB `in`: a luma row below in.height, a chroma row from chroma_row (U at
 * even x, V at odd x, of the 2x2 block's summed channels; an odd height's last block takes its one row twice); the
 * rows between are not written (a GPU backend's host-batch output brings them back as its buffer held them). The
 * sums are offset to stay non-negative before the shift. */
KILN_KERNEL_FN void kiln_color_to_nv12_px(KILN_GLOBAL const uint8_t* in_base, KilnImageDesc in,
                                          KILN_GLOBAL uint8_t* out_base, KilnImageDesc out, KilnYuvConsts k,
                                          int32_t x, int32_t y) {
  const int32_t chroma_row = k.chroma_row > 0 ? k.chroma_row : in.height;
  int32_t sum[3] = {0, 0, 0};
  int32_t c, dy;
  if (y < in.height) {
    for (c = 0; c < 3; ++c) sum[c] = in_base[kiln_px_offset(in, x, y, c)];
    const int32_t luma = ((k.eyr * sum[0] + k.eyg * sum[1] + k.eyb * sum[2] + (1 << 19)) >> 20) + k.y_offset;
    out_base[kiln_px_offset(out, x, y, 0)] = (uint8_t)kiln_mini(luma, 255);
    return;
  }
  const int32_t top = (y - chroma_row) * 2;
  if (y < chroma_row || top >= in.height) return;
  const int32_t left = x - x % 2;
  for (dy = 0; dy < 2; ++dy) {
    const int32_t row = kiln_mini(top + dy, in.height - 1);
    for (c = 0; c < 3; ++c) {
      sum[c] += in_base[kiln_px_offset(in, left, row, c)] + in_base[kiln_px_offset(in, left + 1, row, c)];
    }
  }
  const int32_t u = x % 2 == 0;
  const int32_t fixed = (128 << 22) + (1 << 21) + (u ? k.eur : k.evr) * sum[0] + (u ? k.eug : k.evg) * sum[1] +
                        (u ? k.eub : k.evb) * sum[2];
  const int32_t v = fixed >> 22;
  out_base[kiln_px_offset(out, x, y, 0)] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* Writes output pixel (x, y) for `conversion` (KILN_COLOR_*); `yuv` is read by the NV12 conversions only. */
KILN_KERNEL_FN void kiln_color_pixel(KILN_GLOBAL const uint8_t* in_base, KilnImageDesc in, KILN_GLOBAL uint8_t* out_base,
                                     KilnImageDesc out, int32_t conversion, KilnYuvConsts yuv, int32_t x, int32_t y) {
  int32_t c;
  if (conversion == KILN_COLOR_NV12_TO_RGB) {
    kiln_color_nv12_pixel(in_base, in, out_base, out, yuv, x, y);
  } else if (conversion == KILN_COLOR_RGB_TO_NV12) {
    kiln_color_to_nv12_px(in_base, in, out_base, out, yuv, x, y);
  } else if (conversion == KILN_COLOR_SWAP_RB) {
    /* both values read before either is written: in place (out == in) works */
    const uint32_t first = kiln_color_bits_load(in_base, in, x, y, 0);
    const uint32_t last = kiln_color_bits_load(in_base, in, x, y, 2);
    kiln_color_bits_store(out_base, out, x, y, 0, last);
    kiln_color_bits_store(out_base, out, x, y, 2, first);
    kiln_color_copy(in_base, in, out_base, out, x, y, 1, 1);
    if (in.channels == 4) kiln_color_copy(in_base, in, out_base, out, x, y, 3, 3);
  } else if (conversion == KILN_COLOR_RGB_TO_GRAY || conversion == KILN_COLOR_BGR_TO_GRAY) {
    const int32_t rgb = conversion == KILN_COLOR_RGB_TO_GRAY;
    const float v0 = kiln_px_load(in_base, in, x, y, 0);
    const float v1 = kiln_px_load(in_base, in, x, y, 1);
    const float v2 = kiln_px_load(in_base, in, x, y, 2);
    if (in.type == KILN_PIXEL_U8) {
      const int32_t r = (int32_t)(rgb ? v0 : v2);
      const int32_t b = (int32_t)(rgb ? v2 : v0);
      out_base[kiln_px_offset(out, x, y, 0)] = (uint8_t)kiln_gray_u8(r, (int32_t)v1, b);
    } else {
      const float w0 = rgb ? 0.299f : 0.114f;
      const float w2 = rgb ? 0.114f : 0.299f;
      kiln_px_store(out_base, out, x, y, 0, kiln_color_gray_f(v0, v1, v2, w0, 0.587f, w2));
    }
  } else if (conversion == KILN_COLOR_GRAY_TO_RGB) {
    for (c = 0; c < 3; ++c) kiln_color_copy(in_base, in, out_base, out, x, y, 0, c);
  } else {
    for (c = 0; c < in.channels; ++c) kiln_color_copy(in_base, in, out_base, out, x, y, c, c);
  }
}

#endif
