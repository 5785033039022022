#include "io/heif_coded_size.h"

#include <string>
#include <vector>

#include "io/decode_limits.h"
#include "io/heif_codec_headers.h"
#include "io/isobmff_items.h"

namespace kiln {

namespace {

std::string size_text(uint64_t width, uint64_t height) { return std::to_string(width) + "x" + std::to_string(height); }

uint64_t round_up(uint64_t value, uint64_t block) { return (value + block - 1) / block * block; }

Status coded_size_check(const IsobmffItem& item, const char* codec, uint32_t block, CodedSize coded,
                        int64_t max_pixels) {
  const std::string who = std::string("heif: the ") + codec + " stream of item " + std::to_string(item.id);
  KILN_TRY(decode_pixels_check(who.c_str(), coded.width, coded.height, max_pixels));
  if (!item.has_ispe) return unsupported_format("heif: item " + std::to_string(item.id) + " has no size (ispe)");
  // Either way round: libheif 1.15's own encoder writes ispe turned by irot's quarter turns (orientations 5-8), and
  // the bound on memory is the same.
  const auto fits = [&](uint32_t width, uint32_t height) {
    return coded.width <= round_up(width, block) && coded.height <= round_up(height, block);
  };
  if (!fits(item.ispe_width, item.ispe_height) && !fits(item.ispe_height, item.ispe_width)) {
    return unsupported_format(who + " codes a " + size_text(coded.width, coded.height) +
                              " picture, larger than the item's declared " +
                              size_text(item.ispe_width, item.ispe_height) + " (ispe)");
  }
  return Status::ok();
}

Status hevc_item_check(const IsobmffItem& item, ByteSpan file, int64_t max_pixels) {
  std::vector<ByteSpan> sps;
  for (const ByteSpan& hvcc : item.hvcc) KILN_TRY(hevc_config_sps(hvcc, sps));
  KILN_TRY_ASSIGN(const std::vector<uint8_t> data, isobmff_item_data(item, file.size));
  hevc_stream_sps({data.data(), data.size()}, sps);
  if (sps.empty())
    return unsupported_format("heif: item " + std::to_string(item.id) + " has no HEVC sequence parameter set");
  for (const ByteSpan& unit : sps) {
    KILN_TRY_ASSIGN(const CodedSize coded, hevc_sps_coded_size(unit));
    KILN_TRY(coded_size_check(item, "HEVC", 64, coded, max_pixels));
  }
  return Status::ok();
}

Status av1_item_check(const IsobmffItem& item, ByteSpan file, int64_t max_pixels) {
  std::vector<ByteSpan> headers;
  for (const ByteSpan& av1c : item.av1c) {
    if (av1c.size > 4) av1_sequence_headers({av1c.data + 4, av1c.size - 4}, headers);  // after the 4 fixed bytes
  }
  KILN_TRY_ASSIGN(const std::vector<uint8_t> data, isobmff_item_data(item, file.size));
  av1_sequence_headers({data.data(), data.size()}, headers);
  if (headers.empty())
    return unsupported_format("heif: item " + std::to_string(item.id) + " has no AV1 sequence header");
  for (const ByteSpan& header : headers) {
    KILN_TRY_ASSIGN(const CodedSize coded, av1_sequence_coded_size(header));
    KILN_TRY(coded_size_check(item, "AV1", 128, coded, max_pixels));
  }
  return Status::ok();
}

uint32_t read_be(const uint8_t* p, size_t bytes) {
  uint32_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value = value << 8 | p[i];
  return value;
}

// A grid's or overlay's canvas: libheif allocates it from these fields. Data too short for them is left to libheif,
// which refuses it.
Status derived_item_check(const IsobmffItem& item, ByteSpan file, int64_t max_pixels) {
  KILN_TRY_ASSIGN(const std::vector<uint8_t> data, isobmff_item_data(item, file.size));
  const bool grid = item.type == fourcc("grid");
  if (data.size() < 2) return Status::ok();
  const size_t field = (data[1] & 1) != 0 ? 4 : 2;
  const size_t at = grid ? 4 : 2 + 4 * 2;  // grid: version, flags, rows, columns; iovl: version, flags, fill colour
  if (data.size() < at + 2 * field) return Status::ok();
  const uint32_t width = read_be(data.data() + at, field);
  const uint32_t height = read_be(data.data() + at + field, field);
  const std::string who = std::string("heif: the ") + (grid ? "grid" : "overlay") + " item " + std::to_string(item.id);
  KILN_TRY(decode_pixels_check(who.c_str(), width, height, max_pixels));
  if (item.has_ispe && (width > item.ispe_width || height > item.ispe_height)) {
    return unsupported_format(who + " has an output of " + size_text(width, height) + ", larger than its declared " +
                              size_text(item.ispe_width, item.ispe_height) + " (ispe)");
  }
  return Status::ok();
}

}  // namespace

Status heif_coded_size_check(const uint8_t* data, size_t size, int64_t max_pixels, bool* has_av1) {
  KILN_TRY_ASSIGN(const std::vector<IsobmffItem> items, isobmff_items(data, size));
  const ByteSpan file{data, size};
  for (const IsobmffItem& item : items) {
    if (has_av1 != nullptr && item.type == fourcc("av01")) *has_av1 = true;
    if (item.type == fourcc("hvc1")) KILN_TRY(hevc_item_check(item, file, max_pixels));
    if (item.type == fourcc("av01")) KILN_TRY(av1_item_check(item, file, max_pixels));
    if (item.type == fourcc("grid") || item.type == fourcc("iovl"))
      KILN_TRY(derived_item_check(item, file, max_pixels));
  }
  return Status::ok();
}

}  // namespace kiln
