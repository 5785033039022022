// Image decode/encode. Decode: JPEG (libjpeg-turbo, CMYK included), PNG (libspng), WebP (libwebp), GIF (giflib),
// BMP (stb_image), TIFF (libtiff) and HEIC/AVIF (libheif), from memory or files, the format sniffed from the magic
// bytes, never the name; turned upright by the EXIF orientation and converted to sRGB from an embedded ICC profile
// (lcms2); pixel-count limits against decompression bombs; gray/RGB/RGBA conversion; a batch decoder that spreads
// files over a ThreadPool and keeps going past bad files. Encode: JPEG and PNG. Needs KILN_HAS_JPEG (the codec
// libraries found at configure time); without it every call returns NotImplemented.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/enum_names.h"
#include "kiln/image.h"
#include "kiln/pixel_bytes.h"
#include "kiln/status.h"

namespace kiln {

class ThreadPool;

enum class ImageFormat : uint8_t { kUnknown = 0, kJpeg, kPng, kWebp, kGif, kBmp, kTiff, kHeif };
inline constexpr EnumName<ImageFormat> kImageFormatNames[] = {
    {ImageFormat::kUnknown, "unknown"}, {ImageFormat::kJpeg, "jpeg"}, {ImageFormat::kPng, "png"},
    {ImageFormat::kWebp, "webp"},       {ImageFormat::kGif, "gif"},   {ImageFormat::kBmp, "bmp"},
    {ImageFormat::kTiff, "tiff"},       {ImageFormat::kHeif, "heif"}};
inline const char* image_format_name(ImageFormat format) { return enum_name(kImageFormatNames, format); }
// From the first bytes: FF D8 FF JPEG, 89 'PNG' PNG, 'RIFF' .. 'WEBP' WebP, 'GIF87a'/'GIF89a' GIF, 'BM' + a known
// header size BMP, 'II*\0'/'MM\0*' TIFF, an ISO BMFF 'ftyp' box with a HEIF or AVIF brand HEIF; else kUnknown.
ImageFormat image_format_sniff(const uint8_t* data, size_t size);
// What unknown content is, for the error that refuses it: "an SVG drawing", "a PDF document", "an HTML page",
// "an MP4/QuickTime video", ... or "unknown magic bytes 3c 21 2d 2d".
std::string image_content_describe(const uint8_t* data, size_t size);
// From the file name's extension (.jpg/.jpeg/.png/.webp/.gif/.bmp/.tif/.tiff/.heic/.heif/.avif, any case); kUnknown
// otherwise.
ImageFormat image_format_from_path(const std::string& path);

// Default limit on width * height: 64 Mpx.
inline constexpr int64_t kImageMaxPixels = int64_t{64} * 1024 * 1024;
// Default limit on the size of a file read by image_decode_file: 512 MiB.
inline constexpr int64_t kImageMaxFileBytes = int64_t{512} * 1024 * 1024;
// Default time one image may take to decode: a 64 Mpx JPEG takes under a second; a hostile one could take minutes.
inline constexpr double kImageDecodeTimeoutSeconds = 10;

struct DecodeOptions {
  int64_t max_pixels = kImageMaxPixels;  // images over this are refused after reading the header, before any
                                         // pixel memory is allocated
  int32_t channels = 0;  // 0: as stored (gray 1, color 3, with alpha 4); 1: gray; 3: RGB; 4: RGBA
  int64_t max_file_bytes = kImageMaxFileBytes;
  // A JPEG may decode at 1/2, 1/4 or 1/8 of its size (libjpeg-turbo's DCT scaling, several times faster) as long as
  // the result is at least min_width x min_height: for a caller that shrinks the image to that size anyway.
  // 0 x 0 = full size. PNGs always decode at full size.
  int32_t min_width = 0;
  int32_t min_height = 0;
  // A decode still running after this many seconds stops with an error (0: no limit).
  double timeout_seconds = kImageDecodeTimeoutSeconds;
  // Turn the pixels upright by the file's EXIF orientation (JPEG, PNG eXIf, WebP, TIFF; HEIF's irot/imir always)
  // and convert an embedded ICC profile to sRGB: what a viewer shows. Off: the pixels as stored.
  bool orient = true;
};

// An owning, packed u8 HWC image. Cheap default state; moving keeps the pixel pointer valid.
struct ImageBuffer {
  PixelBytes pixels;  // width * height * channels bytes (kiln/pixel_bytes.h: a std::vector<uint8_t>)
  int32_t width = 0;
  int32_t height = 0;
  int32_t channels = 0;
  int32_t orientation = 1;  // the EXIF orientation (1-8) the decoder applied to turn the stored pixels upright

  ImageView view() const;
  bool empty() const { return pixels.empty(); }
  void reset() { *this = ImageBuffer(); }
};

// Decodes one image held in memory (the formats above; animations and multi-page files: the first frame or page).
// UnsupportedFormat for unknown content (named: "an SVG drawing"), corrupt or truncated data (a PNG without its
// complete IEND chunk included; libjpeg warnings such as "premature end of data" count as errors), for images over
// max_pixels and for a decode that outlasts timeout_seconds; InvalidArgument for bad options.
Result<ImageBuffer> image_decode(const uint8_t* data, size_t size, const DecodeOptions& options = {});
// Reads and decodes one file; every error message starts with the path ("a.jpg: ...").
// IoError when the file cannot be read.
Result<ImageBuffer> image_decode_file(const std::string& path, const DecodeOptions& options = {});

// Converts a u8 HWC image of 1, 3 (RGB) or 4 (RGBA) channels to `channels` (1, 3 or 4): color -> gray with
// OpenCV's fixed-point weights ((9798 R + 19235 G + 3735 B + 16384) >> 15, alpha ignored), gray -> RGB by
// replication, added alpha = 255, dropped alpha discarded.
Result<ImageBuffer> image_convert_channels(const ImageView& image, int32_t channels);

struct EncodeOptions {
  ImageFormat format = ImageFormat::kUnknown;  // image_encode: required; image_encode_file: kUnknown = from
                                              // the file extension
  int32_t jpeg_quality = 95;               // 1..100
  int32_t png_compression = 6;             // zlib level 0..9
};

// Encodes a u8 image (HWC, 1/3/4 channels, any row stride; JPEG: 4 channels drop the alpha) to bytes.
Result<std::vector<uint8_t>> image_encode(const ImageView& image, const EncodeOptions& options = {});
// Encodes and writes `path` crash-safely (temporary file in the same folder, fsync, rename).
Status image_encode_file(const ImageView& image, const std::string& path, const EncodeOptions& options = {});

// The result of decoding many inputs: the images that decoded (in input order) as one var-shape batch, and a
// status per input. Move-only (the batch views point into `buffers`).
struct DecodedBatch {
  std::vector<ImageBuffer> buffers;  // one per decoded image
  VarShapeBatch images;              // views of buffers, images[k] is input source[k]
  std::vector<Status> status;        // per input: ok, or why it was skipped
  std::vector<int64_t> index;        // per input: its position in `images`, or -1
  std::vector<int64_t> source;       // per image: its input index

  DecodedBatch() = default;
  DecodedBatch(DecodedBatch&&) noexcept = default;
  DecodedBatch& operator=(DecodedBatch&&) noexcept = default;
  DecodedBatch(const DecodedBatch&) = delete;
  DecodedBatch& operator=(const DecodedBatch&) = delete;

  int64_t inputs() const { return static_cast<int64_t>(status.size()); }
  int64_t failed() const { return inputs() - images.count(); }
  void reset() { *this = DecodedBatch(); }
};

// Decodes every file, spread over `pool` (nullptr: on the calling thread). A bad file only sets its status.
DecodedBatch image_decode_files(const std::vector<std::string>& paths, const DecodeOptions& options = {},
                                ThreadPool* pool = nullptr);

// In-memory inputs for image_decode_batch.
struct EncodedImage {
  const uint8_t* data = nullptr;
  size_t size = 0;
};
DecodedBatch image_decode_batch(const std::vector<EncodedImage>& inputs, const DecodeOptions& options = {},
                                ThreadPool* pool = nullptr);

}  // namespace kiln
