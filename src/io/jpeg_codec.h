// JPEG encode/decode of 8-bit images (libturbojpeg). Available when KILN_HAS_JPEG.
// A TurboJPEG handle must not be shared between threads: each JpegEncoder / JpegDecoder owns one; keep one
// object per worker thread. The free functions use a thread-local instance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "io/png_codec.h"  // DecodedImage, kDecodeMaxPixels
#include "kiln/image.h"
#include "kiln/status.h"

namespace kiln {

class JpegEncoder {
 public:
  JpegEncoder() = default;
  ~JpegEncoder();
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;
  JpegEncoder(JpegEncoder&& other) noexcept;
  JpegEncoder& operator=(JpegEncoder&& other) noexcept;

  // Appends one JPEG of `image` (u8; 1 channel -> gray JPEG, 3/4 channels RGB/RGBX -> 4:2:0 YCbCr; any
  // row_stride) to `out`. quality 1..100.
  Status encode(const ImageView& image, std::vector<uint8_t>& out, int32_t quality);
  void reset();

 private:
  void* m_handle = nullptr;           // tjhandle, created on first use
  unsigned char* m_buffer = nullptr;  // tjAlloc'd scratch of m_capacity bytes, reused across images
  unsigned long m_capacity = 0;
};

class JpegDecoder {
 public:
  JpegDecoder() = default;
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;
  JpegDecoder(JpegDecoder&& other) noexcept;
  JpegDecoder& operator=(JpegDecoder&& other) noexcept;

  // Gray JPEGs decode to 1 channel, everything else to 3 (RGB). Images over max_pixels are refused after the
  // header is read; corrupt or truncated data (libjpeg warnings included) gives UnsupportedFormat.
  // min_width/min_height > 0: decode at the smallest DCT scale (1/8 .. 1) that keeps at least that size.
  Result<DecodedImage> decode(const uint8_t* data, size_t size, int64_t max_pixels = kDecodeMaxPixels,
                              int32_t min_width = 0, int32_t min_height = 0);
  void reset();

 private:
  void* m_handle = nullptr;
};

Status jpeg_encode(const ImageView& image, std::vector<uint8_t>& out, int32_t quality);
Result<DecodedImage> jpeg_decode(const uint8_t* data, size_t size, int64_t max_pixels = kDecodeMaxPixels,
                                 int32_t min_width = 0, int32_t min_height = 0);

}  // namespace kiln
