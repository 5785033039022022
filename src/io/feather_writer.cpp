// Feather V1 writer (feather_writer.h). The metadata is built with libflatbuffers' FlatBufferBuilder, table by table,
// from the schema of FORMAT.md (feather.fbs); the field numbers below follow that schema's field order.
#include "io/feather_writer.h"

#include <bit>
#include <chrono>
#include <cmath>
#include <limits>

#include <flatbuffers/flatbuffers.h>

namespace kiln {

namespace {

using TableOffset = flatbuffers::Offset<flatbuffers::Table>;

// Feather stores numbers little-endian; the buffers are copied from memory as they are.
static_assert(std::endian::native == std::endian::little, "feather_writer assumes a little-endian host");

constexpr char kMagic[4] = {'F', 'E', 'A', '1'};
constexpr size_t kAlignment = 8;
// Version 2 pads every buffer to 8 bytes (readers take version 1 files' bitmaps and offsets as unpadded).
constexpr int32_t kFormatVersion = 2;

// enum Type : byte (the values' physical type; a timestamp's values are INT64).
constexpr int8_t kTypeInt64 = 4;
constexpr int8_t kTypeDouble = 10;
constexpr int8_t kTypeUtf8 = 11;
// enum TimeUnit : byte.
constexpr int8_t kUnitNanosecond = 3;
// union TypeMetadata: NONE = 0, CategoryMetadata, TimestampMetadata, DateMetadata, TimeMetadata.
constexpr uint8_t kMetadataNone = 0;
constexpr uint8_t kMetadataTimestamp = 2;

// Field numbers: a union takes two (its type, then its value), so Column's metadata is 3.
enum PrimitiveArrayField : int {
  kArrayType = 0, kArrayEncoding, kArrayOffset, kArrayLength, kArrayNullCount, kArrayTotalBytes
};
enum TimestampMetadataField : int { kTimestampUnit = 0, kTimestampTimezone };
enum ColumnField : int { kColumnName = 0, kColumnValues, kColumnMetadataType, kColumnMetadata, kColumnUserMetadata };
enum CTableField : int { kTableDescription = 0, kTableNumRows, kTableColumns, kTableVersion, kTableMetadata };

// A field's slot in its table's vtable.
flatbuffers::voffset_t slot(int field) { return static_cast<flatbuffers::voffset_t>(4 + 2 * field); }

void append_padded(std::string& out, const void* data, size_t size) {
  out.append(static_cast<const char*>(data), size);
  out.append((kAlignment - out.size() % kAlignment) % kAlignment, '\0');
}

struct ArrayPlace {
  int8_t type = 0;
  int64_t offset = 0;
  int64_t length = 0;
  int64_t null_count = 0;
  int64_t total_bytes = 0;
};

// Appends the column's buffers to `out`: bitmap (bit i set = value i present, least significant bit first), offsets,
// values.
Result<ArrayPlace> column_append(const FeatherColumn& column, std::string& out) {
  ArrayPlace place;
  place.offset = static_cast<int64_t>(out.size());
  place.length = column.size();
  const auto n = static_cast<size_t>(place.length);
  switch (column.type) {
    case FeatherType::kDouble: {
      place.type = kTypeDouble;
      std::string bitmap((n + 7) / 8, '\0');
      for (size_t i = 0; i < n; ++i) {
        if (std::isnan(column.doubles[i])) {
          ++place.null_count;
        } else {
          bitmap[i / 8] = static_cast<char>(bitmap[i / 8] | (1 << (i % 8)));
        }
      }
      if (place.null_count > 0) append_padded(out, bitmap.data(), bitmap.size());
      append_padded(out, column.doubles.data(), n * sizeof(double));  // a null's slot keeps its NaN
      break;
    }
    case FeatherType::kTimestampNs:
      place.type = kTypeInt64;
      append_padded(out, column.nanoseconds.data(), n * sizeof(int64_t));
      break;
    case FeatherType::kUtf8: {
      place.type = kTypeUtf8;
      std::vector<int32_t> offsets(n + 1, 0);
      std::string bytes;
      for (size_t i = 0; i < n; ++i) {
        if (bytes.size() + column.strings[i].size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
          return invalid_argument("feather: column " + column.name + " holds more than 2 GiB of text");
        }
        bytes += column.strings[i];
        offsets[i + 1] = static_cast<int32_t>(bytes.size());
      }
      append_padded(out, offsets.data(), offsets.size() * sizeof(int32_t));
      append_padded(out, bytes.data(), bytes.size());
      break;
    }
  }
  place.total_bytes = static_cast<int64_t>(out.size()) - place.offset;
  return place;
}

TableOffset primitive_array_add(flatbuffers::FlatBufferBuilder& fbb, const ArrayPlace& place) {
  const auto start = fbb.StartTable();
  fbb.AddElement<int64_t>(slot(kArrayOffset), place.offset, 0);
  fbb.AddElement<int64_t>(slot(kArrayLength), place.length, 0);
  fbb.AddElement<int64_t>(slot(kArrayNullCount), place.null_count, 0);
  fbb.AddElement<int64_t>(slot(kArrayTotalBytes), place.total_bytes, 0);
  fbb.AddElement<int8_t>(slot(kArrayType), place.type, 0);
  fbb.AddElement<int8_t>(slot(kArrayEncoding), 0, 0);  // PLAIN (the default: not stored)
  return TableOffset(fbb.EndTable(start));
}

TableOffset timestamp_metadata_add(flatbuffers::FlatBufferBuilder& fbb) {
  const auto start = fbb.StartTable();
  fbb.AddElement<int8_t>(slot(kTimestampUnit), kUnitNanosecond, 0);  // no timezone: naive, as pandas' dates
  return TableOffset(fbb.EndTable(start));
}

TableOffset column_add(flatbuffers::FlatBufferBuilder& fbb, const FeatherColumn& column, const ArrayPlace& place) {
  const auto name = fbb.CreateString(column.name);
  // The feather package's reader reads user_metadata without checking that it is there.
  const auto user_metadata = fbb.CreateString("");
  const TableOffset values = primitive_array_add(fbb, place);
  const bool timestamp = column.type == FeatherType::kTimestampNs;
  const TableOffset metadata = timestamp ? timestamp_metadata_add(fbb) : TableOffset();
  const auto start = fbb.StartTable();
  fbb.AddOffset(slot(kColumnName), name);
  fbb.AddOffset(slot(kColumnValues), values);
  fbb.AddOffset(slot(kColumnMetadata), metadata);
  fbb.AddOffset(slot(kColumnUserMetadata), user_metadata);
  fbb.AddElement<uint8_t>(slot(kColumnMetadataType), timestamp ? kMetadataTimestamp : kMetadataNone, kMetadataNone);
  return TableOffset(fbb.EndTable(start));
}

}  // namespace

int64_t FeatherColumn::size() const {
  switch (type) {
    case FeatherType::kDouble: return static_cast<int64_t>(doubles.size());
    case FeatherType::kTimestampNs: return static_cast<int64_t>(nanoseconds.size());
    case FeatherType::kUtf8: return static_cast<int64_t>(strings.size());
  }
  return 0;
}

int64_t feather_day_nanoseconds(int32_t yyyymmdd) {
  using namespace std::chrono;
  const year_month_day date{year{yyyymmdd / 10000}, month{static_cast<unsigned>(yyyymmdd / 100 % 100)},
                            day{static_cast<unsigned>(yyyymmdd % 100)}};
  return duration_cast<nanoseconds>(sys_days{date}.time_since_epoch()).count();
}

Result<std::string> feather_file_make(const std::vector<FeatherColumn>& columns) {
  const int64_t rows = columns.empty() ? 0 : columns.front().size();
  std::string out;
  append_padded(out, kMagic, sizeof(kMagic));
  std::vector<ArrayPlace> places;
  for (const FeatherColumn& column : columns) {
    if (column.name.empty()) return invalid_argument("feather: a column without a name");
    if (column.size() != rows) {
      return invalid_argument("feather: column " + column.name + " has " + std::to_string(column.size()) +
                              " rows, the first " + std::to_string(rows));
    }
    KILN_TRY_ASSIGN(ArrayPlace place, column_append(column, out));
    places.push_back(place);
  }
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<TableOffset> column_tables;
  for (size_t i = 0; i < columns.size(); ++i) column_tables.push_back(column_add(fbb, columns[i], places[i]));
  const auto column_vector = fbb.CreateVector(column_tables);
  const auto start = fbb.StartTable();
  fbb.AddElement<int64_t>(slot(kTableNumRows), rows, 0);
  fbb.AddOffset(slot(kTableColumns), column_vector);
  fbb.AddElement<int32_t>(slot(kTableVersion), kFormatVersion, 0);
  fbb.Finish(TableOffset(fbb.EndTable(start)));  // no description, no table metadata

  const size_t metadata_at = out.size();
  append_padded(out, fbb.GetBufferPointer(), fbb.GetSize());
  const auto metadata_size = static_cast<uint32_t>(out.size() - metadata_at);
  out.append(reinterpret_cast<const char*>(&metadata_size), sizeof(metadata_size));
  out.append(kMagic, sizeof(kMagic));
  return out;
}

}  // namespace kiln
