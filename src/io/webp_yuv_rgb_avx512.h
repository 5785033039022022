// Lossy WebP's YUV 4:2:0 planes (WebPDecodeYUVInto) to RGB with AVX-512, giving exactly the bytes of libwebp's own
// RGB output (WebPDecodeRGBInto): its "fancy" upsampling of the chroma and its fixed-point YUV to RGB, in less time
// than its SSE2 code takes for the same work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln {

// Whether this CPU runs webp_yuv_to_rgb_avx512 (AVX-512 F, BW and VBMI).
bool webp_yuv_rgb_avx512_supported();

// Where WebPDecodeYUVInto writes a width x height image's planes for webp_yuv_to_rgb_avx512: each chroma row has one
// free byte before and one after it (the conversion writes the row's edge samples there), and 64 readable bytes
// follow each plane (its vector loads read past a row's end).
struct WebpYuvPlanes {
  uint8_t* y = nullptr;
  uint8_t* u = nullptr;
  uint8_t* v = nullptr;
  int y_stride = 0;
  int uv_stride = 0;
  size_t y_size = 0;  // what WebPDecodeYUVInto is told each plane holds
  size_t uv_size = 0;
};

// The planes laid out in `storage` (grown when too small, never shrunk: a decoding thread reuses it).
WebpYuvPlanes webp_yuv_planes(std::vector<uint8_t>& storage, int width, int height);

// The planes as RGB rows of width * 3 bytes, `rgb_stride` apart; every byte of those rows is written, none past them.
void webp_yuv_to_rgb_avx512(const WebpYuvPlanes& planes, int width, int height, uint8_t* rgb, size_t rgb_stride);

}  // namespace kiln
