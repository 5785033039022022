#include "io/jpeg_codec.h"

#include <turbojpeg.h>
// jpeglib.h needs FILE declared first.
#include <cstdio>
#include <jpeglib.h>

#include <algorithm>
#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "io/decode_limits.h"
#include "io/decode_memory.h"
#include "io/exif_orientation.h"
#include "io/icc_srgb.h"

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
//
// On libjpeg's own API rather than TurboJPEG's: only it reports progress during the decode, which is where a
// deadline and the scan limit are checked. The settings are TurboJPEG's defaults (accurate integer IDCT, fancy
// upsampling), so the pixels are the ones tjDecompress2 gives.

namespace {

// The smallest of libjpeg-turbo's scaling factors 1/8, 1/4, 1/2, 1 whose result is still at least min_w x min_h.
// Only 1/2, 1/4 and 1/8: the fast reduced IDCTs (the M/8 ones are slower than decoding at full size).
unsigned scale_denom_choose(JDIMENSION width, JDIMENSION height, int32_t min_w, int32_t min_h) {
  unsigned best = 1;
  if (min_w <= 0 && min_h <= 0) return best;
  for (const unsigned denom : {2u, 4u, 8u}) {
    const auto scaled = [denom](JDIMENSION size) { return (static_cast<int64_t>(size) + denom - 1) / denom; };
    if (scaled(width) >= min_w && scaled(height) >= min_h) best = denom;
  }
  return best;
}

// The same bound TurboJPEG's TJFLAG_LIMITSCANS sets: a progressive JPEG of thousands of tiny scans is a known way
// to make a small file take minutes.
constexpr int kMaxScans = 500;

// Rows asked of one jpeg_read_scanlines call: at least what it can return at the sizes kiln decodes (an iMCU row of
// the tallest sampling, 4 x 8).
constexpr JDIMENSION kRowsPerRead = 32;

struct DecodeGuard {
  jpeg_error_mgr err{};
  jpeg_progress_mgr progress{};
  std::jmp_buf jump{};
  const Deadline* deadline = nullptr;
  char message[JMSG_LENGTH_MAX + 64] = {};
};

DecodeGuard& guard_of(j_common_ptr cinfo) { return *reinterpret_cast<DecodeGuard*>(cinfo->err); }

[[noreturn]] void guard_fail(j_common_ptr cinfo) { std::longjmp(guard_of(cinfo).jump, 1); }

void on_error(j_common_ptr cinfo) {
  (*cinfo->err->format_message)(cinfo, guard_of(cinfo).message);
  guard_fail(cinfo);
}

// Warnings (level -1: corrupt or truncated entropy data) are errors; traces are dropped.
void on_message(j_common_ptr cinfo, int level) {
  if (level < 0) on_error(cinfo);
}

void on_progress(j_common_ptr cinfo) {
  DecodeGuard& guard = guard_of(cinfo);
  if (reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number > kMaxScans) {
    std::snprintf(guard.message, sizeof(guard.message), "a progressive image of more than %d scans", kMaxScans);
    guard_fail(cinfo);
  }
  if (guard.deadline->passed()) {
    std::snprintf(guard.message, sizeof(guard.message), "took longer than the decode timeout of %g s",
                  guard.deadline->seconds());
    guard_fail(cinfo);
  }
}

// Runs `step` (libjpeg calls only: nothing with a destructor may live in its frame) and reports whether it finished
// without a libjpeg error; guard.message says why not.
template <typename Step>
bool guarded(DecodeGuard& guard, const Step& step) {
  if (setjmp(guard.jump) != 0) return false;
  step();
  return true;
}

struct Decompress {
  DecodeGuard guard;
  jpeg_decompress_struct info{};
  bool created = false;

  ~Decompress() {
    if (created) jpeg_destroy_decompress(&info);
  }
};

}  // namespace

Result<DecodedImage> jpeg_decode(const uint8_t* data, size_t size, int64_t max_pixels, int32_t min_width,
                                 int32_t min_height, const Deadline& deadline) {
  if (data == nullptr || size == 0) return unsupported_format("jpeg_decode: empty input");
  if (size > 0xFFFFFFFFul) return unsupported_format("jpeg_decode: input too large");
  Decompress d;
  d.guard.deadline = &deadline;
  d.info.err = jpeg_std_error(&d.guard.err);
  d.guard.err.error_exit = on_error;
  d.guard.err.emit_message = on_message;
  d.guard.progress.progress_monitor = on_progress;
  const auto failed = [&](const char* what) {
    return unsupported_format(std::string("jpeg ") + what + ": " + d.guard.message);
  };
  if (!guarded(d.guard, [&] { jpeg_create_decompress(&d.info); })) return failed("decode");
  d.created = true;
  d.info.progress = &d.guard.progress;
  if (!guarded(d.guard, [&] {
        jpeg_mem_src(&d.info, data, static_cast<unsigned long>(size));
        jpeg_save_markers(&d.info, JPEG_APP0 + 1, 0xFFFF);  // EXIF
        jpeg_save_markers(&d.info, JPEG_APP0 + 2, 0xFFFF);  // ICC profile
        jpeg_read_header(&d.info, TRUE);
      })) {
    return failed("decode header");
  }
  const JDIMENSION width = d.info.image_width;
  const JDIMENSION height = d.info.image_height;
  KILN_TRY(decode_pixels_check("jpeg_decode", width, height, max_pixels));
  DecodedImage result;
  for (jpeg_saved_marker_ptr m = d.info.marker_list; m != nullptr; m = m->next) {
    if (m->marker == JPEG_APP0 + 1 && m->data_length >= 6 && std::memcmp(m->data, "Exif\0\0", 6) == 0) {
      result.orientation = exif_orientation(m->data, m->data_length);
      break;
    }
  }
  JOCTET* icc = nullptr;
  unsigned int icc_size = 0;
  if (guarded(d.guard, [&] { jpeg_read_icc_profile(&d.info, &icc, &icc_size); }) && icc != nullptr) {
    result.icc.assign(icc, icc + icc_size);
  }
  std::free(icc);
  // CMYK and YCCK (libjpeg turns YCCK into CMYK) come out as CMYK and are converted to RGB below.
  const bool cmyk = d.info.jpeg_color_space == JCS_CMYK || d.info.jpeg_color_space == JCS_YCCK;
  const bool gray = d.info.jpeg_color_space == JCS_GRAYSCALE;
  d.info.out_color_space = gray ? JCS_GRAYSCALE : cmyk ? JCS_CMYK : JCS_RGB;
  d.info.scale_num = 1;
  // The minimum size is the upright image's: a sideways photo's stored width is its upright height.
  const bool sideways = result.orientation >= 5;
  d.info.scale_denom = scale_denom_choose(width, height, sideways ? min_height : min_width,
                                          sideways ? min_width : min_height);
  if (!guarded(d.guard, [&] { jpeg_calc_output_dimensions(&d.info); })) return failed("decode");
  result.width = static_cast<int32_t>(d.info.output_width);
  result.height = static_cast<int32_t>(d.info.output_height);
  result.channels = gray ? 1 : 3;
  const size_t row_bytes = static_cast<size_t>(result.width) * static_cast<size_t>(cmyk ? 4 : result.channels);
  // Every row is written by jpeg_read_scanlines before anyone reads it (an error discards the image), so the
  // buffer grows without a zero-fill, on huge pages when it is large.
  PixelBytes cmyk_pixels;
  PixelBytes& decoded = cmyk ? cmyk_pixels : result.pixels;
  uint8_t* const pixels = decode_buffer_grow(decoded, row_bytes * static_cast<size_t>(result.height));
  // Many rows a call: libjpeg hands out an iMCU row (8 to 32 rows) at a time, and every call runs the progress
  // monitor, which reads the clock for the deadline (a row a call read it 512 times for a 512 x 512 image).
  if (!guarded(d.guard, [&] {
        jpeg_start_decompress(&d.info);
        JSAMPROW rows[kRowsPerRead];
        while (d.info.output_scanline < d.info.output_height) {
          const JDIMENSION first = d.info.output_scanline;
          const JDIMENSION count = std::min<JDIMENSION>(kRowsPerRead, d.info.output_height - first);
          for (JDIMENSION i = 0; i < count; ++i) rows[i] = pixels + row_bytes * (first + i);
          jpeg_read_scanlines(&d.info, rows, count);
        }
        jpeg_finish_decompress(&d.info);
      })) {
    return failed("decode");
  }
  if (cmyk) {
    // Adobe's APP14 marker says the samples are stored inverted (255 = no ink), as Photoshop writes them.
    const int64_t count = static_cast<int64_t>(result.width) * result.height;
    uint8_t* const rgb = decode_buffer_grow(result.pixels, static_cast<size_t>(count) * 3);
    KILN_TRY(cmyk_to_rgb(cmyk_pixels.data(), count, d.info.saw_Adobe_marker != 0, result.icc, rgb));
    result.icc.clear();  // the CMYK profile was used; the result is sRGB
  }
  return result;
}

// --- free functions ---

Status jpeg_encode(const ImageView& image, std::vector<uint8_t>& out, int32_t quality) {
  thread_local JpegEncoder encoder;
  return encoder.encode(image, out, quality);
}

}  // namespace kiln
