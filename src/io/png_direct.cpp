#include "io/png_direct.h"

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "io/crc32.h"
#include "io/decode_memory.h"
#include "io/png_defilter.h"

namespace kiln {

namespace {

constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
constexpr uint32_t kMaxChunkLength = 0x7FFFFFFF;  // PNG's limit on a chunk's data

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

struct Header {
  uint32_t width = 0;
  uint32_t height = 0;
  int32_t channels = 0;
};

// The chunks the pixels come from: the header and the IDAT pieces, in order.
struct ChunkLayout {
  Header header;
  std::vector<std::pair<const uint8_t*, uint32_t>> idat;
};

// IHDR of a file this reader takes: 8-bit gray (0), RGB (2) or RGBA (6), deflate, standard filters, not interlaced.
std::optional<Header> header_parse(const uint8_t* d) {
  Header h;
  h.width = be32(d);
  h.height = be32(d + 4);
  const uint8_t depth = d[8], color = d[9], compression = d[10], filter = d[11], interlace = d[12];
  if (depth != 8 || compression != 0 || filter != 0 || interlace != 0) return std::nullopt;
  h.channels = color == 0 ? 1 : color == 2 ? 3 : color == 6 ? 4 : 0;
  if (h.channels == 0 || h.width == 0 || h.height == 0 || h.width > kMaxChunkLength || h.height > kMaxChunkLength) {
    return std::nullopt;
  }
  return h;
}

// Walks the chunks up to IEND, checking each CRC; nullopt for anything this reader leaves to libspng.
std::optional<ChunkLayout> layout_read(const uint8_t* data, size_t size) {
  if (size < 8 || std::memcmp(data, kSignature, 8) != 0) return std::nullopt;
  ChunkLayout layout;
  bool have_header = false, idat_ended = false;
  for (size_t pos = 8;;) {
    if (size - pos < 12) return std::nullopt;
    const uint32_t length = be32(data + pos);
    if (length > kMaxChunkLength || size - pos - 12 < length) return std::nullopt;
    const uint8_t* type = data + pos + 4;
    Crc32 crc;
    crc.update(type, 4 + size_t{length});
    if (crc.value() != be32(type + 4 + length)) return std::nullopt;
    const uint8_t* body = type + 4;
    pos += 12 + size_t{length};
    const auto is = [&](const char* name) { return std::memcmp(type, name, 4) == 0; };
    if (!have_header) {
      if (!is("IHDR") || length != 13) return std::nullopt;
      auto header = header_parse(body);
      if (!header) return std::nullopt;
      layout.header = *header;
      have_header = true;
    } else if (is("IDAT")) {
      if (idat_ended) return std::nullopt;  // IDAT chunks must be consecutive
      layout.idat.emplace_back(body, length);
    } else if (is("IEND")) {
      if (layout.idat.empty() || length != 0) return std::nullopt;
      return layout;
    } else {
      idat_ended = !layout.idat.empty();
      // tRNS makes pixels transparent, PLTE on gray is invalid, an unknown critical chunk (upper-case first letter)
      // must stop a decoder: all for libspng to handle. Other ancillary chunks (colour profiles, text) are ignored,
      // as kiln's libspng decode ignores them.
      if (is("tRNS") || is("IHDR") || (is("PLTE") && (layout.header.channels == 1 || !layout.idat.empty()))) {
        return std::nullopt;
      }
      if (!is("PLTE") && (type[0] & 0x20) == 0) return std::nullopt;
    }
  }
}

class Inflater {
 public:
  explicit Inflater(const std::vector<std::pair<const uint8_t*, uint32_t>>& pieces) : m_pieces(pieces) {
    m_ok = inflateInit(&m_stream) == Z_OK;
  }
  ~Inflater() {
    if (m_ok) inflateEnd(&m_stream);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Fills `out` completely from the stream; false when the stream is damaged or ends first.
  bool read(uint8_t* out, size_t size) {
    m_stream.next_out = out;
    m_stream.avail_out = static_cast<uInt>(size);
    while (m_ok && m_stream.avail_out > 0) {
      if (m_stream.avail_in == 0 && !next_piece()) return false;
      const int rc = inflate(&m_stream, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        m_ended = true;
        return m_stream.avail_out == 0;
      }
      if (rc != Z_OK && !(rc == Z_BUF_ERROR && m_stream.avail_in == 0)) return false;
    }
    return m_ok;
  }
  // After the last row: the stream must end here, its Adler-32 checked, with no pixels left over.
  bool finish() {
    uint8_t spare[64];
    while (m_ok && !m_ended) {
      m_stream.next_out = spare;
      m_stream.avail_out = sizeof(spare);
      if (m_stream.avail_in == 0 && !next_piece()) return false;
      const int rc = inflate(&m_stream, Z_NO_FLUSH);
      if (m_stream.avail_out != sizeof(spare)) return false;
      if (rc == Z_STREAM_END) {
        m_ended = true;
      } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && m_stream.avail_in == 0)) {
        return false;
      }
    }
    return m_ended;
  }

 private:
  bool next_piece() {
    if (m_next >= m_pieces.size()) return false;
    m_stream.next_in = const_cast<Bytef*>(m_pieces[m_next].first);
    m_stream.avail_in = m_pieces[m_next].second;
    ++m_next;
    return true;
  }

  const std::vector<std::pair<const uint8_t*, uint32_t>>& m_pieces;
  size_t m_next = 0;
  z_stream m_stream{};
  bool m_ok = false;
  bool m_ended = false;
};

}  // namespace

std::optional<DecodedImage> png_decode_direct(const uint8_t* data, size_t size, int64_t max_pixels,
                                              const Deadline& deadline) {
  if (data == nullptr) return std::nullopt;
  std::optional<ChunkLayout> layout = layout_read(data, size);
  if (!layout) return std::nullopt;
  const Header& h = layout->header;
  if (static_cast<int64_t>(h.width) * h.height > max_pixels) return std::nullopt;
  const size_t bpp = static_cast<size_t>(h.channels), row_bytes = bpp * h.width;
  if (row_bytes >= UINT32_MAX) return std::nullopt;  // zlib counts a row's bytes in 32 bits

  DecodedImage image;
  image.width = static_cast<int32_t>(h.width);
  image.height = static_cast<int32_t>(h.height);
  image.channels = h.channels;
  uint8_t* const pixels = decode_buffer_grow(image.pixels, row_bytes * h.height);  // every row defiltered into
  std::vector<uint8_t> scanline(1 + row_bytes);
  const std::vector<uint8_t> zeros(row_bytes);
  Inflater inflater(layout->idat);
  const uint8_t* prev = zeros.data();
  for (uint32_t y = 0; y < h.height; ++y) {
    if (y % 16 == 0 && deadline.passed()) return std::nullopt;
    uint8_t* out = pixels + row_bytes * y;
    if (!inflater.read(scanline.data(), scanline.size())) return std::nullopt;
    if (!png_defilter_row(scanline[0], scanline.data() + 1, prev, out, row_bytes, bpp)) return std::nullopt;
    prev = out;
  }
  if (!inflater.finish()) return std::nullopt;
  return image;
}

}  // namespace kiln
