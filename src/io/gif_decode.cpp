// GIF through giflib's record-level API: the records up to the first image only (an animation of 10,000 frames
// costs its first frame), that image's graphic control extension for its transparent colour, its LZW data decoded
// by gif_lzw.h, and its rows composited onto the logical screen.
#include <gif_lib.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "io/decode_limits.h"
#include "io/decode_memory.h"
#include "io/gif_lzw.h"
#include "io/web_codecs.h"

namespace kiln {

namespace {

struct GifSource {
  const uint8_t* data;
  size_t size;
  size_t at = 0;
};

int gif_read(GifFileType* gif, GifByteType* out, int length) {
  auto* src = static_cast<GifSource*>(gif->UserData);
  const size_t n = std::min(static_cast<size_t>(length), src->size - src->at);
  std::memcpy(out, src->data + src->at, n);
  src->at += n;
  return static_cast<int>(n);
}

struct GifCloser {
  GifFileType* gif = nullptr;
  ~GifCloser() {
    int err = 0;
    if (gif != nullptr) DGifCloseFile(gif, &err);
  }
};

Status gif_error(const char* what, int code) {
  const char* why = GifErrorString(code);
  return unsupported_format(std::string("gif: ") + what + ": " + (why != nullptr ? why : "damaged file"));
}

// The rows of an interlaced image in the order they are stored: every 8th from 0, every 8th from 4, every 4th from
// 2, every 2nd from 1.
std::vector<int32_t> gif_row_order(int32_t height, bool interlaced) {
  std::vector<int32_t> rows;
  rows.reserve(static_cast<size_t>(height));
  if (!interlaced) {
    for (int32_t y = 0; y < height; ++y) rows.push_back(y);
    return rows;
  }
  static constexpr int32_t kStart[4] = {0, 4, 2, 1};
  static constexpr int32_t kStep[4] = {8, 8, 4, 2};
  for (int pass = 0; pass < 4; ++pass) {
    for (int32_t y = kStart[pass]; y < height; y += kStep[pass]) rows.push_back(y);
  }
  return rows;
}

}  // namespace

Result<DecodedImage> gif_decode(const uint8_t* data, size_t size, int64_t max_pixels, const Deadline& deadline) {
  GifSource source{data, size, 0};
  int err = 0;
  GifCloser file{DGifOpen(&source, gif_read, &err)};
  GifFileType* gif = file.gif;
  if (gif == nullptr) return gif_error("open", err);
  KILN_TRY(decode_pixels_check("gif", gif->SWidth, gif->SHeight, max_pixels));
  int transparent = -1;
  for (;;) {
    GifRecordType record = UNDEFINED_RECORD_TYPE;
    if (DGifGetRecordType(gif, &record) == GIF_ERROR) return gif_error("read", gif->Error);
    if (record == TERMINATE_RECORD_TYPE) return unsupported_format("gif: no image in the file");
    if (record == EXTENSION_RECORD_TYPE) {
      int code = 0;
      GifByteType* ext = nullptr;
      if (DGifGetExtension(gif, &code, &ext) == GIF_ERROR) return gif_error("read extension", gif->Error);
      if (code == GRAPHICS_EXT_FUNC_CODE && ext != nullptr && ext[0] >= 4) transparent = (ext[1] & 1) ? ext[4] : -1;
      while (ext != nullptr) {
        if (DGifGetExtensionNext(gif, &ext) == GIF_ERROR) return gif_error("read extension", gif->Error);
      }
      continue;
    }
    if (record != IMAGE_DESC_RECORD_TYPE) continue;
    if (DGifGetImageDesc(gif) == GIF_ERROR) return gif_error("read image descriptor", gif->Error);
    break;
  }
  const GifImageDesc& frame = gif->Image;
  KILN_TRY(decode_pixels_check("gif frame", frame.Width, frame.Height, max_pixels));
  const ColorMapObject* palette = frame.ColorMap != nullptr ? frame.ColorMap : gif->SColorMap;
  if (palette == nullptr) return unsupported_format("gif: no colour table");
  const int32_t width = gif->SWidth;
  const int32_t height = gif->SHeight;
  const bool covers = frame.Left == 0 && frame.Top == 0 && frame.Width >= width && frame.Height >= height;
  DecodedImage image;
  image.width = width;
  image.height = height;
  image.channels = transparent >= 0 || !covers ? 4 : 3;
  decode_buffer_reserve(image.pixels, static_cast<size_t>(width) * height * image.channels);
  image.pixels.assign(static_cast<size_t>(width) * height * image.channels, 0);
  // Each palette index's pixel as written (RGB or RGBA); the transparent index is skipped.
  uint8_t lut[256][4] = {};
  for (int i = 0; i < 256; ++i) {
    const GifColorType color = i < palette->ColorCount ? palette->Colors[i] : GifColorType{0, 0, 0};
    lut[i][0] = color.Red;
    lut[i][1] = color.Green;
    lut[i][2] = color.Blue;
    lut[i][3] = 255;
  }
  // The frame's columns that fall on the screen.
  const int32_t x_begin = std::max(0, -frame.Left);
  const int32_t x_end = std::max(x_begin, std::min(frame.Width, width - frame.Left));
  const int32_t c = image.channels;
  std::vector<uint8_t> lzw;
  lzw.reserve(size - source.at);  // no more than the rest of the file
  int code_size = 0;
  GifByteType* block = nullptr;
  if (DGifGetCode(gif, &code_size, &block) == GIF_ERROR) return gif_error("read image data", gif->Error);
  while (block != nullptr) {
    lzw.insert(lzw.end(), block + 1, block + 1 + block[0]);
    if (DGifGetCodeNext(gif, &block) == GIF_ERROR) return gif_error("read image data", gif->Error);
  }
  // The usual GIF (one frame of the screen's size, opaque, not interlaced) has its indices decoded into the last
  // third of its RGB pixels, which are then written from the first: pixel p's bytes end before index p + 1.
  const size_t count = static_cast<size_t>(frame.Width) * static_cast<size_t>(frame.Height);
  const bool in_place = c == 3 && transparent < 0 && !frame.Interlace && frame.Left == 0 && frame.Top == 0 &&
                        frame.Width == width && frame.Height == height;
  std::vector<uint8_t> separate;
  if (!in_place) {
    decode_buffer_reserve(separate, count);
    separate.resize(count);
  }
  uint8_t* indices = in_place ? image.pixels.data() + 2 * count : separate.data();
  KILN_TRY(gif_lzw_decode(lzw, code_size, indices, count, deadline));
  const std::vector<int32_t> rows = gif_row_order(frame.Height, frame.Interlace);
  const int32_t n = x_end - x_begin;
  for (size_t i = 0; i < rows.size(); ++i) {
    const int32_t y = frame.Top + rows[i];
    if (y < 0 || y >= height || n == 0) continue;
    uint8_t* out = image.pixels.data() + (static_cast<size_t>(y) * width + frame.Left + x_begin) * c;
    const uint8_t* in = indices + i * static_cast<size_t>(frame.Width) + x_begin;
    if (transparent < 0 && c == 3) {
      // 4 bytes a pixel (the 4th is overwritten by the next pixel), 3 for the row's last.
      for (int32_t x = 0; x + 1 < n; ++x, out += 3) std::memcpy(out, lut[in[x]], 4);
      std::memcpy(out, lut[in[n - 1]], 3);
    } else {
      for (int32_t x = 0; x < n; ++x, out += c) {
        if (in[x] != transparent) std::memcpy(out, lut[in[x]], static_cast<size_t>(c));
      }
    }
  }
  return image;
}

}  // namespace kiln
