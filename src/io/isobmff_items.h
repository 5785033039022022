// The items of a HEIF/AVIF file's top-level `meta` box, read with bounds checks and without decoding anything: each
// item's type (iinf), its ispe size and codec configuration (hvcC, av1C through iprp's ipco and ipma) and where its
// data lies (iloc, in the file or in idat). heif_coded_size.cpp checks these before libheif is given the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kiln/status.h"

namespace kiln {

struct ByteSpan {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

constexpr uint32_t fourcc(const char (&code)[5]) {
  return uint32_t(uint8_t(code[0])) << 24 | uint32_t(uint8_t(code[1])) << 16 | uint32_t(uint8_t(code[2])) << 8 |
         uint32_t(uint8_t(code[3]));
}

struct IsobmffItem {
  uint32_t id = 0;
  uint32_t type = 0;  // fourcc: hvc1, av01, grid, iovl, iden, Exif, ...
  bool has_ispe = false;
  uint32_t ispe_width = 0;
  uint32_t ispe_height = 0;
  std::vector<ByteSpan> hvcc;  // the payloads of its hvcC properties (after the box header)
  std::vector<ByteSpan> av1c;
  std::vector<ByteSpan> extents;  // its data, in order; empty when iloc does not list it
  bool data_unreadable = false;   // iloc lists it with a construction method or extent kiln cannot follow
};

// UnsupportedFormat "heif: ..." for a box that runs past its parent or the file, or more items or properties than a
// real file has (65,536 each). Files without a top-level meta give an empty list.
Result<std::vector<IsobmffItem>> isobmff_items(const uint8_t* data, size_t size);

// The item's data joined (its extents in order); UnsupportedFormat when it cannot be read or is over `max_bytes`.
Result<std::vector<uint8_t>> isobmff_item_data(const IsobmffItem& item, size_t max_bytes);

}  // namespace kiln
