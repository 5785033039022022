// WebP through libwebp: still images with WebPDecode*Into, animations' first frame with WebPAnimDecoder (composited
// on its canvas as a browser shows it), the EXIF and ICCP chunks through the demuxer.
#include <webp/decode.h>
#include <webp/demux.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/cpu_isa.h"
#include "io/decode_limits.h"
#include "io/decode_memory.h"
#include "io/exif_orientation.h"
#include "io/web_codecs.h"
#include "io/webp_yuv_rgb_avx512.h"

namespace kiln {

namespace {

struct WebpDemuxDeleter {
  void operator()(WebPDemuxer* d) const { WebPDemuxDelete(d); }
};
struct WebpAnimDeleter {
  void operator()(WebPAnimDecoder* d) const { WebPAnimDecoderDelete(d); }
};

std::vector<uint8_t> webp_chunk(WebPDemuxer* demux, const char* fourcc) {
  WebPChunkIterator it;
  if (!WebPDemuxGetChunk(demux, fourcc, 1, &it)) return {};
  std::vector<uint8_t> bytes(it.chunk.bytes, it.chunk.bytes + it.chunk.size);
  WebPDemuxReleaseChunkIterator(&it);
  return bytes;
}

Status webp_first_frame(const WebPData& webp, DecodedImage* image) {
  WebPAnimDecoderOptions options;
  if (!WebPAnimDecoderOptionsInit(&options)) return unsupported_format("webp: libwebp version mismatch");
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  const std::unique_ptr<WebPAnimDecoder, WebpAnimDeleter> anim(WebPAnimDecoderNew(&webp, &options));
  if (!anim) return unsupported_format("webp: damaged animation");
  uint8_t* frame = nullptr;
  int timestamp = 0;
  if (!WebPAnimDecoderGetNext(anim.get(), &frame, &timestamp)) return unsupported_format("webp: damaged first frame");
  image->channels = 4;
  image->pixels.assign(frame, frame + image->pixels.size());
  return Status::ok();
}

// A simple file (RIFF, WEBP, then a VP8 or VP8L chunk; no VP8X) is one still image with no EXIF, ICC or animation:
// it needs no demuxer (its parse and allocations are skipped).
bool webp_simple(const uint8_t* data, size_t size) {
  return size >= 16 && std::memcmp(data + 12, "VP8", 3) == 0 && (data[15] == ' ' || data[15] == 'L');
}

Result<WebPBitstreamFeatures> webp_features(const uint8_t* data, size_t size) {
  WebPBitstreamFeatures features;
  if (WebPGetFeatures(data, size, &features) != VP8_STATUS_OK) return unsupported_format("webp: damaged header");
  return features;
}

// A lossy image without alpha as libwebp's YUV planes (into the thread's reused storage), then to RGB with
// AVX-512: the same bytes as WebPDecodeRGBInto, whose own upsampling and conversion (SSE2) take longer.
bool webp_yuv_decode(const uint8_t* data, size_t size, int width, int height, uint8_t* rgb) {
  // Planes up to this size stay with the thread for its next image (about 2.8 MP); bigger ones are freed, so that
  // no thread holds a huge image's planes for good.
  constexpr size_t kPlanesKept = size_t{4} << 20;
  thread_local std::vector<uint8_t> storage;
  const WebpYuvPlanes planes = webp_yuv_planes(storage, width, height);
  const bool decoded = WebPDecodeYUVInto(data, size, planes.y, planes.y_size, planes.y_stride, planes.u,
                                         planes.uv_size, planes.uv_stride, planes.v, planes.uv_size,
                                         planes.uv_stride) != nullptr;
  if (decoded) webp_yuv_to_rgb_avx512(planes, width, height, rgb, static_cast<size_t>(width) * 3);
  if (storage.size() > kPlanesKept) std::vector<uint8_t>().swap(storage);
  return decoded;
}

bool webp_yuv_path(const WebPBitstreamFeatures& features) {
  return features.format == 1 && !features.has_alpha && cpu_isa_active() >= CpuIsa::kAvx2 &&
         webp_yuv_rgb_avx512_supported();
}

// A still image into image->pixels (its width and height already set and checked against the limits).
Status webp_still_decode(const uint8_t* data, size_t size, const WebPBitstreamFeatures& features, DecodedImage* image) {
  image->channels = features.has_alpha ? 4 : 3;
  const auto bytes = static_cast<size_t>(image->width) * image->height * image->channels;
  uint8_t* const pixels = decode_buffer_grow(image->pixels, bytes);  // libwebp writes every pixel or fails
  if (webp_yuv_path(features)) {
    if (!webp_yuv_decode(data, size, image->width, image->height, pixels)) {
      return unsupported_format("webp: damaged or truncated image data");
    }
    return Status::ok();
  }
  const int stride = image->width * image->channels;
  const uint8_t* decoded = features.has_alpha ? WebPDecodeRGBAInto(data, size, pixels, bytes, stride)
                                              : WebPDecodeRGBInto(data, size, pixels, bytes, stride);
  if (decoded == nullptr) return unsupported_format("webp: damaged or truncated image data");
  return Status::ok();
}

}  // namespace

Result<DecodedImage> webp_decode(const uint8_t* data, size_t size, int64_t max_pixels) {
  if (webp_simple(data, size)) {
    KILN_TRY_ASSIGN(const WebPBitstreamFeatures features, webp_features(data, size));
    KILN_TRY(decode_pixels_check("webp", features.width, features.height, max_pixels));
    DecodedImage image;
    image.width = features.width;
    image.height = features.height;
    KILN_TRY(webp_still_decode(data, size, features, &image));
    return image;
  }
  const WebPData webp{data, size};
  WebPDemuxState state;
  const std::unique_ptr<WebPDemuxer, WebpDemuxDeleter> demux(WebPDemuxPartial(&webp, &state));
  if (!demux || state < WEBP_DEMUX_PARSED_HEADER) return unsupported_format("webp: damaged header");
  if (state != WEBP_DEMUX_DONE) return unsupported_format("webp: truncated");
  const int64_t width = WebPDemuxGetI(demux.get(), WEBP_FF_CANVAS_WIDTH);
  const int64_t height = WebPDemuxGetI(demux.get(), WEBP_FF_CANVAS_HEIGHT);
  const uint32_t flags = WebPDemuxGetI(demux.get(), WEBP_FF_FORMAT_FLAGS);
  KILN_TRY(decode_pixels_check("webp", width, height, max_pixels));
  DecodedImage image;
  image.width = static_cast<int32_t>(width);
  image.height = static_cast<int32_t>(height);
  if (flags & EXIF_FLAG) {
    const std::vector<uint8_t> exif = webp_chunk(demux.get(), "EXIF");
    image.orientation = exif_orientation(exif.data(), exif.size());
  }
  if (flags & ICCP_FLAG) image.icc = webp_chunk(demux.get(), "ICCP");
  if (flags & ANIMATION_FLAG) {
    image.pixels.resize(static_cast<size_t>(width * height * 4));
    KILN_TRY(webp_first_frame(webp, &image));
    return image;
  }
  KILN_TRY_ASSIGN(const WebPBitstreamFeatures features, webp_features(data, size));
  KILN_TRY(webp_still_decode(data, size, features, &image));
  return image;
}

}  // namespace kiln
