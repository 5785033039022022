#include "io/isobmff_items.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace kiln {

namespace {

constexpr size_t kMaxItems = 65536;
constexpr size_t kMaxProperties = 65536;
constexpr size_t kMaxExtents = size_t{1} << 20;  // over all items: an extent may take no bytes of iloc at all

Status isobmff_damaged(const std::string& what) { return unsupported_format("heif: " + what); }

// Big-endian fields; reading past the end returns 0 and clears ok().
class FieldReader {
 public:
  FieldReader(const uint8_t* data, size_t size) : m_data(data), m_size(size) {}
  uint64_t read(size_t bytes) {
    if (bytes > m_size - m_pos) {
      m_ok = false;
      m_pos = m_size;
      return 0;
    }
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; ++i) value = value << 8 | m_data[m_pos + i];
    m_pos += bytes;
    return value;
  }
  bool ok() const { return m_ok; }
  size_t position() const { return m_pos; }

 private:
  const uint8_t* m_data;
  size_t m_size;
  size_t m_pos = 0;
  bool m_ok = true;
};

struct Box {
  uint32_t type = 0;
  ByteSpan payload;  // after the header
};

// The boxes directly inside `span`, in order; up to the first of type `last` when given (what follows it is not read).
Result<std::vector<Box>> child_boxes(ByteSpan span, const char* parent, uint32_t last = 0) {
  std::vector<Box> boxes;
  size_t pos = 0;
  while (pos < span.size) {
    if (span.size - pos < 8) return isobmff_damaged(std::string("a box header in '") + parent + "' is cut off");
    FieldReader header(span.data + pos, span.size - pos);
    uint64_t box_size = header.read(4);
    const uint32_t type = static_cast<uint32_t>(header.read(4));
    if (box_size == 1) {
      box_size = header.read(8);
      if (!header.ok()) return isobmff_damaged(std::string("a box header in '") + parent + "' is cut off");
    } else if (box_size == 0) {
      box_size = span.size - pos;
    }
    if (box_size < header.position() || box_size > span.size - pos)
      return isobmff_damaged(std::string("a box in '") + parent + "' runs past its end");
    boxes.push_back({type, {span.data + pos + header.position(), static_cast<size_t>(box_size) - header.position()}});
    pos += static_cast<size_t>(box_size);
    if (last != 0 && type == last) break;
  }
  return boxes;
}

// A full box's payload after its version and flags.
ByteSpan full_box_body(ByteSpan payload) {
  if (payload.size < 4) return {payload.data, 0};
  return {payload.data + 4, payload.size - 4};
}

class ItemTable {
 public:
  std::vector<IsobmffItem> items;

  Status add(uint32_t id, uint32_t type) {
    if (items.size() >= kMaxItems) return isobmff_damaged("more than 65,536 items");
    if (!m_index.emplace(id, items.size()).second)
      return isobmff_damaged("item " + std::to_string(id) + " is listed twice in iinf");
    items.push_back({});
    items.back().id = id;
    items.back().type = type;
    return Status::ok();
  }
  IsobmffItem* find(uint32_t id) {
    const auto it = m_index.find(id);
    return it == m_index.end() ? nullptr : &items[it->second];
  }

 private:
  std::unordered_map<uint32_t, size_t> m_index;
};

Status read_iinf(ByteSpan payload, ItemTable& table) {
  if (payload.size < 4) return isobmff_damaged("iinf is cut off");
  const ByteSpan body = full_box_body(payload);
  const size_t count_bytes = payload.data[0] == 0 ? 2 : 4;
  if (body.size < count_bytes) return isobmff_damaged("iinf is cut off");
  KILN_TRY_ASSIGN(const std::vector<Box> entries,
                  child_boxes({body.data + count_bytes, body.size - count_bytes}, "iinf"));
  for (const Box& entry : entries) {
    if (entry.type != fourcc("infe") || entry.payload.size < 4) continue;
    const uint8_t version = entry.payload.data[0];
    if (version < 2) continue;  // no item type before version 2
    const ByteSpan body_infe = full_box_body(entry.payload);
    FieldReader fields(body_infe.data, body_infe.size);
    const uint32_t id = static_cast<uint32_t>(fields.read(version == 2 ? 2 : 4));
    fields.read(2);  // protection index
    const uint32_t type = static_cast<uint32_t>(fields.read(4));
    if (!fields.ok()) return isobmff_damaged("an infe box is cut off");
    KILN_TRY(table.add(id, type));
  }
  return Status::ok();
}

Status read_iloc(ByteSpan payload, ByteSpan file, ByteSpan idat, ItemTable& table) {
  if (payload.size < 4) return isobmff_damaged("iloc is cut off");
  const uint8_t version = payload.data[0];
  const ByteSpan body = full_box_body(payload);
  FieldReader fields(body.data, body.size);
  const uint64_t sizes = fields.read(2);
  const size_t offset_size = sizes >> 12 & 15;
  const size_t length_size = sizes >> 8 & 15;
  const size_t base_offset_size = sizes >> 4 & 15;
  const size_t index_size = version >= 1 ? sizes & 15 : 0;
  for (const size_t s : {offset_size, length_size, base_offset_size, index_size}) {
    if (s != 0 && s != 4 && s != 8) return isobmff_damaged("iloc has a field of " + std::to_string(s) + " bytes");
  }
  const uint64_t count = fields.read(version < 2 ? 2 : 4);
  size_t extents_total = 0;
  for (uint64_t i = 0; i < count && fields.ok(); ++i) {
    const uint32_t id = static_cast<uint32_t>(fields.read(version < 2 ? 2 : 4));
    const uint64_t method = version >= 1 ? fields.read(2) & 15 : 0;
    const uint64_t data_reference = fields.read(2);
    const uint64_t base = fields.read(base_offset_size);
    const uint64_t extent_count = fields.read(2);
    IsobmffItem* item = table.find(id);
    const ByteSpan source = method == 0 ? file : idat;
    const bool followable = (method == 0 || method == 1) && data_reference == 0;
    for (uint64_t e = 0; e < extent_count && fields.ok(); ++e) {
      fields.read(index_size);
      const uint64_t offset = fields.read(offset_size);
      uint64_t length = fields.read(length_size);
      if (++extents_total > kMaxExtents) return isobmff_damaged("iloc lists more than 2^20 extents");
      if (item == nullptr) continue;
      const uint64_t start = base + offset;
      if (!followable || start < base || start > source.size) {
        item->data_unreadable = true;
        continue;
      }
      if (length == 0) length = source.size - start;  // 0: to the end
      if (length > source.size - start) {
        item->data_unreadable = true;
        continue;
      }
      item->extents.push_back({source.data + start, static_cast<size_t>(length)});
    }
  }
  if (!fields.ok()) return isobmff_damaged("iloc is cut off");
  return Status::ok();
}

Status attach_property(const Box& property, IsobmffItem& item) {
  if (property.type == fourcc("ispe")) {
    const ByteSpan body = full_box_body(property.payload);
    FieldReader fields(body.data, body.size);
    const uint32_t width = static_cast<uint32_t>(fields.read(4));
    const uint32_t height = static_cast<uint32_t>(fields.read(4));
    if (!fields.ok()) return isobmff_damaged("an ispe box is cut off");
    // Two ispe on one item: the smaller one bounds the decode (libheif uses the last).
    item.ispe_width = item.has_ispe ? std::min(item.ispe_width, width) : width;
    item.ispe_height = item.has_ispe ? std::min(item.ispe_height, height) : height;
    item.has_ispe = true;
  } else if (property.type == fourcc("hvcC")) {
    item.hvcc.push_back(property.payload);
  } else if (property.type == fourcc("av1C")) {
    item.av1c.push_back(property.payload);
  }
  return Status::ok();
}

Status read_ipma(ByteSpan payload, const std::vector<Box>& properties, ItemTable& table) {
  if (payload.size < 4) return isobmff_damaged("ipma is cut off");
  const uint8_t version = payload.data[0];
  const bool wide_index = (payload.data[3] & 1) != 0;
  const ByteSpan body = full_box_body(payload);
  FieldReader fields(body.data, body.size);
  const uint64_t entries = fields.read(4);
  for (uint64_t i = 0; i < entries && fields.ok(); ++i) {
    const uint32_t id = static_cast<uint32_t>(fields.read(version < 1 ? 2 : 4));
    const uint64_t associations = fields.read(1);
    IsobmffItem* item = table.find(id);
    for (uint64_t a = 0; a < associations && fields.ok(); ++a) {
      const uint64_t index = fields.read(wide_index ? 2 : 1) & (wide_index ? 0x7FFF : 0x7F);
      if (item == nullptr || index == 0 || index > properties.size() || !fields.ok()) continue;
      KILN_TRY(attach_property(properties[index - 1], *item));
    }
  }
  if (!fields.ok()) return isobmff_damaged("ipma is cut off");
  return Status::ok();
}

Status read_iprp(ByteSpan payload, ItemTable& table) {
  KILN_TRY_ASSIGN(const std::vector<Box> children, child_boxes(payload, "iprp"));
  std::vector<Box> properties;
  for (const Box& child : children) {
    if (child.type != fourcc("ipco")) continue;
    KILN_TRY_ASSIGN(properties, child_boxes(child.payload, "ipco"));
    break;
  }
  if (properties.size() > kMaxProperties) return isobmff_damaged("more than 65,536 properties");
  for (const Box& child : children) {
    if (child.type == fourcc("ipma")) KILN_TRY(read_ipma(child.payload, properties, table));
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<IsobmffItem>> isobmff_items(const uint8_t* data, size_t size) {
  KILN_TRY_ASSIGN(const std::vector<Box> top, child_boxes({data, size}, "file", fourcc("meta")));
  const auto meta = std::find_if(top.begin(), top.end(), [](const Box& b) { return b.type == fourcc("meta"); });
  if (meta == top.end()) return std::vector<IsobmffItem>{};
  KILN_TRY_ASSIGN(const std::vector<Box> boxes, child_boxes(full_box_body(meta->payload), "meta"));
  ItemTable table;
  ByteSpan idat;
  for (const Box& box : boxes) {
    if (box.type == fourcc("iinf")) KILN_TRY(read_iinf(box.payload, table));
    if (box.type == fourcc("idat") && idat.data == nullptr) idat = box.payload;
  }
  for (const Box& box : boxes) {
    if (box.type == fourcc("iloc")) KILN_TRY(read_iloc(box.payload, {data, size}, idat, table));
    if (box.type == fourcc("iprp")) KILN_TRY(read_iprp(box.payload, table));
  }
  return std::move(table.items);
}

Result<std::vector<uint8_t>> isobmff_item_data(const IsobmffItem& item, size_t max_bytes) {
  if (item.data_unreadable) return isobmff_damaged("the data of item " + std::to_string(item.id) + " cannot be read");
  std::vector<uint8_t> joined;
  for (const ByteSpan& extent : item.extents) {
    if (extent.size > max_bytes - joined.size())
      return isobmff_damaged("the data of item " + std::to_string(item.id) + " is over " +
                             std::to_string(max_bytes) + " bytes");
    joined.insert(joined.end(), extent.data, extent.data + extent.size);
  }
  return joined;
}

}  // namespace kiln
