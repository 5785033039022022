#include "apps/render/hdf5_encoder.h"

#include <zlib.h>

#include "io/decode_memory.h"
#include "io/fletcher32.h"
#include "io/zstd_runs.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace kiln {

namespace {

// A batch's buffer (1,024 charts: ~14 MB) grows by doubling; past 1 MB it goes to 8 MB at least, each step reserved
// with the huge-page hint (decode_memory.h), so a fresh buffer is faulted in 2 MB at a time, not 4 KB (those faults
// were 2-3 % of a render job's CPU on the VM). Below 1 MB (one image, a small batch) nothing changes.
void room_for_image(std::vector<uint8_t>& out, size_t image_bytes) {
  constexpr size_t kHinted = size_t{1} << 20;
  const size_t room = std::min(image_bytes, size_t{256} << 10);  // more than a chart compresses to
  if (out.capacity() < kHinted || out.capacity() - out.size() >= room) return;
  std::vector<uint8_t> grown;  // hinted before the bytes are copied in (reserve() would copy them first)
  decode_buffer_reserve(grown, std::max({2 * out.capacity(), out.size() + image_bytes, size_t{8} << 20}));
  grown.assign(out.begin(), out.end());
  out.swap(grown);
}

// Common part: validates the image and yields its packed little-endian bytes (copying only when needed).
class EncoderBase : public ImageEncoder {
 public:
  EncoderBase(int32_t width, int32_t height, PixelType type, int32_t channels)
      : m_width(width), m_height(height), m_channels(channels), m_type(type) {}

 protected:
  Result<const uint8_t*> packed(const ImageView& image, size_t* size) {
    if (image.data == nullptr) return invalid_argument("image has no data");
    if (image.channels != m_channels) {
      return invalid_argument("image has " + std::to_string(image.channels) + " channels, the dataset " +
                              std::to_string(m_channels));
    }
    if (m_width > 0 && (image.width != m_width || image.height != m_height || image.type != m_type)) {
      return invalid_argument("image is " + std::to_string(image.width) + "x" + std::to_string(image.height) + " " +
                              pixel_type_name(image.type) + ", the dataset expects " + std::to_string(m_width) + "x" +
                              std::to_string(m_height) + " " + pixel_type_name(m_type));
    }
    const size_t row_bytes = image.pixel_size() * static_cast<size_t>(image.width);
    *size = image.packed_bytes();
    const bool swap = image.type == PixelType::kF32 && std::endian::native != std::endian::little;
    if (image.is_packed() && !swap) return static_cast<const uint8_t*>(image.data);
    m_packed.resize(*size);
    for (int32_t y = 0; y < image.height; ++y) {
      std::memcpy(m_packed.data() + static_cast<size_t>(y) * row_bytes, image.row<uint8_t>(y), row_bytes);
    }
    if (swap) {
      for (size_t i = 0; i + 4 <= *size; i += 4) {
        std::swap(m_packed[i], m_packed[i + 3]);
        std::swap(m_packed[i + 1], m_packed[i + 2]);
      }
    }
    return static_cast<const uint8_t*>(m_packed.data());
  }

  std::vector<uint8_t> m_packed;
  std::vector<uint8_t> m_scratch;  // compressed output, appended to the caller's buffer

 private:
  int32_t m_width;
  int32_t m_height;
  int32_t m_channels;
  PixelType m_type;
};

// Chart images are mostly background: the run-based compressor (zstd_runs.h) is tried first and zstd's own match
// finder is used only when fewer than half of the bytes were runs. Both write ordinary zstd frames, followed by the
// Fletcher-32 trailer of HDF5's checksum filter (declared after zstd by DataFile), which every HDF5 reader checks: a
// damaged chunk fails to read instead of decoding to garbage. It sums the ~14 KB a chart compresses to, where the
// zstd frame checksum would hash all 400 KB of pixels.
class ZstdEncoder final : public EncoderBase {
 public:
  ZstdEncoder(int32_t level, int32_t width, int32_t height, PixelType type, int32_t channels)
      : EncoderBase(width, height, type, channels), m_runs(level), m_cctx(ZSTD_createCCtx()) {
    if (m_cctx != nullptr && ZSTD_isError(ZSTD_CCtx_setParameter(m_cctx, ZSTD_c_compressionLevel, level))) {
      ZSTD_freeCCtx(m_cctx);
      m_cctx = nullptr;
    }
  }
  ~ZstdEncoder() override { ZSTD_freeCCtx(m_cctx); }
  ZstdEncoder(const ZstdEncoder&) = delete;
  ZstdEncoder& operator=(const ZstdEncoder&) = delete;

  Status encode(const ImageView& image, std::vector<uint8_t>& out) override {
    if (m_cctx == nullptr) return Status(Errc::kOutOfMemory, "cannot create a zstd context");
    size_t size = 0;
    KILN_TRY_ASSIGN(const uint8_t* src, packed(image, &size));
    room_for_image(out, size);
    const size_t start = out.size();
    KILN_TRY(m_runs.compress(src, size, pixel_type_size(image.type), out));
    if (m_runs.last_matched_bytes() * 2 < size) {
      out.resize(start);
      const size_t bound = ZSTD_compressBound(size);
      if (m_scratch.size() < bound) m_scratch.resize(bound);
      const size_t n = ZSTD_compress2(m_cctx, m_scratch.data(), bound, src, size);
      if (ZSTD_isError(n)) return io_error(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
      out.insert(out.end(), m_scratch.data(), m_scratch.data() + n);
    }
    hdf5_fletcher32_append(out, start);
    return Status::ok();
  }

 private:
  ZstdRunCompressor m_runs;
  ZSTD_CCtx* m_cctx;
};

class GzipEncoder final : public EncoderBase {
 public:
  GzipEncoder(int32_t level, int32_t width, int32_t height, PixelType type, int32_t channels)
      : EncoderBase(width, height, type, channels) {
    std::memset(&m_stream, 0, sizeof(m_stream));
    m_ready = deflateInit(&m_stream, level) == Z_OK;
  }
  ~GzipEncoder() override {
    if (m_ready) deflateEnd(&m_stream);
  }
  GzipEncoder(const GzipEncoder&) = delete;
  GzipEncoder& operator=(const GzipEncoder&) = delete;

  // A zlib stream (header + deflate + adler32), byte-identical to compress2(): what H5Z_FILTER_DEFLATE inflates.
  Status encode(const ImageView& image, std::vector<uint8_t>& out) override {
    if (!m_ready) return Status(Errc::kOutOfMemory, "cannot initialise zlib");
    size_t size = 0;
    KILN_TRY_ASSIGN(const uint8_t* src, packed(image, &size));
    if (size > std::numeric_limits<uInt>::max() / 2) return invalid_argument("image too large for one zlib chunk");
    if (deflateReset(&m_stream) != Z_OK) return io_error("zlib deflateReset failed");
    const size_t bound = deflateBound(&m_stream, static_cast<uLong>(size));
    if (m_scratch.size() < bound) m_scratch.resize(bound);
    m_stream.next_in = const_cast<Bytef*>(src);
    m_stream.avail_in = static_cast<uInt>(size);
    m_stream.next_out = m_scratch.data();
    m_stream.avail_out = static_cast<uInt>(bound);
    const int rc = deflate(&m_stream, Z_FINISH);
    if (rc != Z_STREAM_END) return io_error("zlib deflate failed (" + std::to_string(rc) + ")");
    room_for_image(out, size);
    out.insert(out.end(), m_scratch.data(), m_scratch.data() + m_stream.total_out);
    return Status::ok();
  }

 private:
  z_stream m_stream;
  bool m_ready = false;
};

class RawEncoder final : public EncoderBase {
 public:
  using EncoderBase::EncoderBase;
  Status encode(const ImageView& image, std::vector<uint8_t>& out) override {
    size_t size = 0;
    KILN_TRY_ASSIGN(const uint8_t* src, packed(image, &size));
    room_for_image(out, size);
    out.insert(out.end(), src, src + size);
    return Status::ok();
  }
};

}  // namespace

Status hdf5_compression_level_check(Compression compression, int32_t level) {
  switch (compression) {
    case Compression::kZstd:
      if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel()) {
        return invalid_argument("zstd level " + std::to_string(level) + " is outside " +
                                std::to_string(ZSTD_minCLevel()) + ".." + std::to_string(ZSTD_maxCLevel()));
      }
      return Status::ok();
    case Compression::kGzip:
      if (level < 0 || level > 9) return invalid_argument("gzip level " + std::to_string(level) + " is outside 0..9");
      return Status::ok();
    case Compression::kNone:
      return Status::ok();
  }
  return invalid_argument("unknown compression");
}

Result<std::unique_ptr<ImageEncoder>> hdf5_encoder_create(Compression compression, int32_t level, int32_t width,
                                                          int32_t height, PixelType type, int32_t channels) {
  KILN_TRY(hdf5_compression_level_check(compression, level));
  std::unique_ptr<ImageEncoder> encoder;
  switch (compression) {
    case Compression::kZstd: encoder = std::make_unique<ZstdEncoder>(level, width, height, type, channels); break;
    case Compression::kGzip: encoder = std::make_unique<GzipEncoder>(level, width, height, type, channels); break;
    case Compression::kNone: encoder = std::make_unique<RawEncoder>(width, height, type, channels); break;
  }
  if (!encoder) return invalid_argument("unknown compression");
  return encoder;
}

}  // namespace kiln
