// JPEG encode (TurboJPEG) and decode (libjpeg-turbo's libjpeg API) of 8-bit images. Available when KILN_HAS_JPEG.
// A TurboJPEG handle must not be shared between threads: each JpegEncoder owns one; keep one per worker thread.
// jpeg_encode uses a thread-local instance; jpeg_decode keeps no state between calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/deadline.h"
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

Status jpeg_encode(const ImageView& image, std::vector<uint8_t>& out, int32_t quality);
// Gray JPEGs decode to 1 channel, everything else to 3 (RGB; CMYK and YCCK converted, through their own ICC profile
// where they carry one). The EXIF orientation and the ICC profile come back in DecodedImage, not applied (image_decode
// applies them). Images over max_pixels are refused after the header
// is read; corrupt or truncated data (libjpeg warnings included), more than 500 progressive scans and a decode
// still running at `deadline` give UnsupportedFormat. min_width/min_height > 0: decode at the smallest DCT scale
// (1/8 .. 1) that keeps at least that size.
Result<DecodedImage> jpeg_decode(const uint8_t* data, size_t size, int64_t max_pixels = kDecodeMaxPixels,
                                 int32_t min_width = 0, int32_t min_height = 0,
                                 const Deadline& deadline = Deadline::never());

}  // namespace kiln
