#include "io/jpeg_codec.h"

#include <turbojpeg.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

namespace kiln {

namespace {

Status tj_status(Errc code, const char* what, tjhandle handle) {
  return {code, std::string("jpeg ") + what + ": " + tjGetErrorStr2(handle)};
}

}  // namespace

// --- encoder ---

JpegEncoder::~JpegEncoder() { reset(); }

JpegEncoder::JpegEncoder(JpegEncoder&& other) noexcept
    : m_handle(std::exchange(other.m_handle, nullptr)),
      m_buffer(std::exchange(other.m_buffer, nullptr)),
      m_capacity(std::exchange(other.m_capacity, 0)) {}

JpegEncoder& JpegEncoder::operator=(JpegEncoder&& other) noexcept {
  if (this != &other) {
    reset();
    m_handle = std::exchange(other.m_handle, nullptr);
    m_buffer = std::exchange(other.m_buffer, nullptr);
    m_capacity = std::exchange(other.m_capacity, 0);
  }
  return *this;
}

void JpegEncoder::reset() {
  if (m_buffer != nullptr) tjFree(m_buffer);
  if (m_handle != nullptr) tjDestroy(m_handle);
  m_buffer = nullptr;
  m_handle = nullptr;
  m_capacity = 0;
}

Status JpegEncoder::encode(const ImageView& image, std::vector<uint8_t>& out, int32_t quality) {
  if (image.type != PixelType::kU8) return unsupported_format("jpeg_encode: JPEG stores uint8 images");
  if (image.data == nullptr || image.width <= 0 || image.height <= 0)
    return invalid_argument("jpeg_encode: empty image");
  int pixel_format = TJPF_GRAY;
  int subsamp = TJSAMP_GRAY;
  switch (image.channels) {
    case 1: break;
    case 3: pixel_format = TJPF_RGB; subsamp = TJSAMP_420; break;
    case 4: pixel_format = TJPF_RGBX; subsamp = TJSAMP_420; break;
    default:
      return invalid_argument("jpeg_encode: " + std::to_string(image.channels) + " channels (expected 1, 3 or 4)");
  }
  const int64_t row_bytes = static_cast<int64_t>(image.width) * image.channels;
  if (image.row_stride < row_bytes || image.row_stride > INT32_MAX)
    return invalid_argument("jpeg_encode: bad row_stride");
  if (m_handle == nullptr) {
    m_handle = tjInitCompress();
    if (m_handle == nullptr) return Status(Errc::kOutOfMemory, "jpeg_encode: cannot create a TurboJPEG handle");
  }
  const unsigned long bound = tjBufSize(image.width, image.height, subsamp);
  if (bound == static_cast<unsigned long>(-1) || bound > static_cast<unsigned long>(INT32_MAX))
    return invalid_argument("jpeg_encode: image too large");
  if (bound > m_capacity) {
    if (m_buffer != nullptr) tjFree(m_buffer);
    m_buffer = tjAlloc(static_cast<int>(bound));
    m_capacity = m_buffer != nullptr ? bound : 0;
    if (m_buffer == nullptr) return Status(Errc::kOutOfMemory, "jpeg_encode: cannot allocate the output buffer");
  }
  unsigned char* dst = m_buffer;
  unsigned long size = m_capacity;
  const int rc = tjCompress2(m_handle, static_cast<const unsigned char*>(image.data), image.width,
                             static_cast<int>(image.row_stride), image.height, pixel_format, &dst, &size, subsamp,
                             std::clamp(quality, 1, 100), TJFLAG_NOREALLOC);
  if (rc != 0) {
    Status status = tj_status(Errc::kIoError, "encode", m_handle);
    reset();  // never reuse a handle after a failure
    return status;
  }
  out.insert(out.end(), m_buffer, m_buffer + size);
  return Status::ok();
}

// --- decoder ---

JpegDecoder::~JpegDecoder() { reset(); }

JpegDecoder::JpegDecoder(JpegDecoder&& other) noexcept : m_handle(std::exchange(other.m_handle, nullptr)) {}

JpegDecoder& JpegDecoder::operator=(JpegDecoder&& other) noexcept {
  if (this != &other) {
    reset();
    m_handle = std::exchange(other.m_handle, nullptr);
  }
  return *this;
}

void JpegDecoder::reset() {
  if (m_handle != nullptr) tjDestroy(m_handle);
  m_handle = nullptr;
}

namespace {

// The smallest of libjpeg-turbo's scaling factors 1/8, 1/4, 1/2, 1 whose result is still at least min_w x min_h.
tjscalingfactor scale_choose(int width, int height, int32_t min_w, int32_t min_h) {
  tjscalingfactor best{1, 1};
  if (min_w <= 0 && min_h <= 0) return best;
  int count = 0;
  const tjscalingfactor* factors = tjGetScalingFactors(&count);
  for (int i = 0; factors != nullptr && i < count; ++i) {
    const tjscalingfactor f = factors[i];
    // Only 1/2, 1/4 and 1/8: the fast reduced IDCTs (the M/8 ones are slower than decoding at full size).
    if (f.num != 1 || (f.denom != 2 && f.denom != 4 && f.denom != 8) || f.denom <= best.denom) continue;
    if (TJSCALED(width, f) >= min_w && TJSCALED(height, f) >= min_h) best = f;
  }
  return best;
}

}  // namespace

Result<DecodedImage> JpegDecoder::decode(const uint8_t* data, size_t size, int64_t max_pixels, int32_t min_width,
                                         int32_t min_height) {
  // A TurboJPEG handle that failed mid-stream can carry state into the next image (seen as bogus-table errors on
  // valid input): drop it after any failure and start the next call with a fresh one.
  auto fail = [this](Status status) {
    reset();
    return status;
  };
  if (data == nullptr || size == 0) return unsupported_format("jpeg_decode: empty input");
  if (size > 0xFFFFFFFFul) return unsupported_format("jpeg_decode: input too large");
  if (m_handle == nullptr) {
    m_handle = tjInitDecompress();
    if (m_handle == nullptr) return Status(Errc::kOutOfMemory, "jpeg_decode: cannot create a TurboJPEG handle");
  }
  int width = 0;
  int height = 0;
  int subsamp = 0;
  int colorspace = 0;
  if (tjDecompressHeader3(m_handle, data, static_cast<unsigned long>(size), &width, &height, &subsamp,
                          &colorspace) != 0)
    return fail(tj_status(Errc::kUnsupportedFormat, "decode header", m_handle));
  if (width <= 0 || height <= 0) return unsupported_format("jpeg_decode: invalid image size");
  if (static_cast<int64_t>(width) * height > max_pixels)
    return invalid_argument("jpeg_decode: " + std::to_string(width) + "x" + std::to_string(height) +
                            " image exceeds the limit of " + std::to_string(max_pixels) + " pixels");
  if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK)
    return unsupported_format("jpeg_decode: CMYK JPEGs are not supported");

  const tjscalingfactor scale = scale_choose(width, height, min_width, min_height);
  width = TJSCALED(width, scale);
  height = TJSCALED(height, scale);
  DecodedImage result;
  result.width = width;
  result.height = height;
  result.channels = colorspace == TJCS_GRAY ? 1 : 3;
  const int pixel_format = result.channels == 1 ? TJPF_GRAY : TJPF_RGB;
  result.pixels.resize(static_cast<size_t>(width) * static_cast<size_t>(height) * result.channels);
  // Stop on warnings too (truncated or corrupt entropy data) and bound progressive scans (CVE-style DoS).
  if (tjDecompress2(m_handle, data, static_cast<unsigned long>(size), result.pixels.data(), width,
                    width * result.channels, height, pixel_format, TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0)
    return fail(tj_status(Errc::kUnsupportedFormat, "decode", m_handle));
  return result;
}

// --- free functions ---

Status jpeg_encode(const ImageView& image, std::vector<uint8_t>& out, int32_t quality) {
  thread_local JpegEncoder encoder;
  return encoder.encode(image, out, quality);
}

Result<DecodedImage> jpeg_decode(const uint8_t* data, size_t size, int64_t max_pixels, int32_t min_width,
                                 int32_t min_height) {
  thread_local JpegDecoder decoder;
  return decoder.decode(data, size, max_pixels, min_width, min_height);
}

}  // namespace kiln
