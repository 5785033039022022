// Feather V1 files read back here through flatbuffers' generic table access, field by field as FORMAT.md's schema
// numbers them (tests/cli/test_render_jkx.py reads the sink's files with the feather package itself).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include <flatbuffers/flatbuffers.h>

#include "io/feather_writer.h"

namespace kiln {
namespace {

using flatbuffers::Table;
using TableVector = flatbuffers::Vector<flatbuffers::Offset<Table>>;

// vtable slot of field number n: 4 + 2n. CTable: description 0, num_rows 1, columns 2, version 3, metadata 4.
// Column: name 0, values 1, metadata_type 2, metadata 3, user_metadata 4. PrimitiveArray: type 0, encoding 1,
// offset 2, length 3, null_count 4, total_bytes 5. TimestampMetadata: unit 0, timezone 1.
constexpr flatbuffers::voffset_t field(int n) { return static_cast<flatbuffers::voffset_t>(4 + 2 * n); }

template <typename T>
T at(const std::string& file, int64_t offset) {
  T value;
  std::memcpy(&value, file.data() + offset, sizeof(T));
  return value;
}

struct Parsed {
  const Table* table = nullptr;
  std::string metadata;  // kept alive for `table`
};

// Checks the frame ("FEA1" + padding, ..., metadata, its size, "FEA1") and returns the CTable.
void parse(const std::string& file, Parsed* out) {
  ASSERT_GE(file.size(), 16u);
  EXPECT_EQ(file.substr(0, 4), "FEA1");
  EXPECT_EQ(file.substr(4, 4), std::string(4, '\0'));
  EXPECT_EQ(file.substr(file.size() - 4), "FEA1");
  const auto size = at<uint32_t>(file, static_cast<int64_t>(file.size()) - 8);
  ASSERT_EQ(size % 8, 0u);
  ASSERT_LE(size + 16u, file.size());
  const size_t start = file.size() - 8 - size;
  EXPECT_EQ(start % 8, 0u);
  out->metadata = file.substr(start, size);
  out->table = flatbuffers::GetRoot<Table>(out->metadata.data());
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(out->metadata.data()), out->metadata.size());
  EXPECT_TRUE(out->table->VerifyTableStart(verifier));
}

struct Array {
  int8_t type = -1;
  int8_t encoding = -1;
  int64_t offset = 0, length = 0, null_count = 0, total_bytes = 0;
};

Array array_of(const Table* column) {
  const auto* values = column->GetPointer<const Table*>(field(1));
  if (values == nullptr) return {};
  return {values->GetField<int8_t>(field(0), 0),        values->GetField<int8_t>(field(1), 0),
          values->GetField<int64_t>(field(2), 0),       values->GetField<int64_t>(field(3), 0),
          values->GetField<int64_t>(field(4), 0),       values->GetField<int64_t>(field(5), 0)};
}

TEST(FeatherWriter, ColumnsBuffersAndMetadataFollowTheFormat) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<FeatherColumn> columns(3);
  columns[0].name = "Date";
  columns[0].type = FeatherType::kTimestampNs;
  columns[0].nanoseconds = {0, 86'400'000'000'000, -1, 7};
  columns[1].name = "StockID";
  columns[1].type = FeatherType::kUtf8;
  columns[1].strings = {"AAPL", "", "Zürich", "10001"};
  columns[2].name = "Ret_5d";
  columns[2].doubles = {0.25, nan, -1e300, nan};
  auto made = feather_file_make(columns);
  ASSERT_TRUE(made.is_ok()) << made.status().message();
  const std::string& file = *made;
  Parsed parsed;
  ASSERT_NO_FATAL_FAILURE(parse(file, &parsed));
  const Table* table = parsed.table;
  EXPECT_EQ(table->GetField<int64_t>(field(1), -1), 4);
  EXPECT_EQ(table->GetField<int32_t>(field(3), -1), 2);  // version 2: buffers padded to 8 bytes
  EXPECT_EQ(table->GetPointer<const flatbuffers::String*>(field(0)), nullptr);
  const auto* list = table->GetPointer<const TableVector*>(field(2));
  ASSERT_NE(list, nullptr);
  ASSERT_EQ(list->size(), 3u);

  const int8_t types[] = {4, 11, 10};  // INT64 (a timestamp's values), UTF8, DOUBLE
  const int64_t nulls[] = {0, 0, 2};
  int64_t next = 8;  // the buffers follow one another from the padded magic on
  for (uint32_t c = 0; c < 3; ++c) {
    const Table* column = list->Get(c);
    const auto* name = column->GetPointer<const flatbuffers::String*>(field(0));
    ASSERT_NE(name, nullptr);
    EXPECT_EQ(name->str(), columns[c].name);
    const auto* user_metadata = column->GetPointer<const flatbuffers::String*>(field(4));
    ASSERT_NE(user_metadata, nullptr);  // the feather package dereferences it
    EXPECT_EQ(user_metadata->size(), 0u);
    const Array a = array_of(column);
    EXPECT_EQ(a.type, types[c]) << name->str();
    EXPECT_EQ(a.encoding, 0);
    EXPECT_EQ(a.length, 4);
    EXPECT_EQ(a.null_count, nulls[c]);
    EXPECT_EQ(a.offset, next);
    EXPECT_EQ(a.offset % 8, 0);
    EXPECT_EQ(a.total_bytes % 8, 0);
    next = a.offset + a.total_bytes;
  }
  EXPECT_EQ(static_cast<size_t>(next), file.size() - 8 - at<uint32_t>(file, static_cast<int64_t>(file.size()) - 8));

  // Date: TimestampMetadata (union type 2) in nanoseconds without a time zone; values as given.
  const Table* date = list->Get(0);
  EXPECT_EQ(date->GetField<uint8_t>(field(2), 0), 2);
  const auto* timestamp = date->GetPointer<const Table*>(field(3));
  ASSERT_NE(timestamp, nullptr);
  EXPECT_EQ(timestamp->GetField<int8_t>(field(0), -1), 3);
  EXPECT_EQ(timestamp->GetPointer<const flatbuffers::String*>(field(1)), nullptr);
  const Array d = array_of(date);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(at<int64_t>(file, d.offset + 8 * i), columns[0].nanoseconds[i]);

  // StockID: no metadata; int32 offsets (5, padded to 24 bytes), then the bytes.
  const Table* stock = list->Get(1);
  EXPECT_EQ(stock->GetField<uint8_t>(field(2), 0), 0);  // NONE (the default: not stored)
  EXPECT_EQ(stock->GetPointer<const Table*>(field(3)), nullptr);
  const Array s = array_of(stock);
  const int64_t text = s.offset + 24;
  for (int i = 0; i < 4; ++i) {
    const auto from = at<int32_t>(file, s.offset + 4 * i);
    const auto to = at<int32_t>(file, s.offset + 4 * (i + 1));
    EXPECT_EQ(file.substr(static_cast<size_t>(text + from), static_cast<size_t>(to - from)), columns[1].strings[i]);
  }
  EXPECT_EQ(at<int32_t>(file, s.offset), 0);

  // Ret_5d: the validity bitmap first (bits 0 and 2 set, padded to 8 bytes), then every value (NaN at the nulls).
  const Array r = array_of(list->Get(2));
  EXPECT_EQ(static_cast<uint8_t>(file[static_cast<size_t>(r.offset)]), 0b0101);
  EXPECT_EQ(r.total_bytes, 8 + 4 * 8);
  EXPECT_EQ(at<double>(file, r.offset + 8), 0.25);
  EXPECT_TRUE(std::isnan(at<double>(file, r.offset + 16)));
  EXPECT_EQ(at<double>(file, r.offset + 24), -1e300);
}

TEST(FeatherWriter, ColumnsWithoutNullsHaveNoBitmapAndAnEmptyTableIsAFile) {
  std::vector<FeatherColumn> columns(1);
  columns[0].name = "x";
  columns[0].doubles = {1.0, 2.0, 3.0};
  auto made = feather_file_make(columns);
  ASSERT_TRUE(made.is_ok());
  Parsed parsed;
  ASSERT_NO_FATAL_FAILURE(parse(*made, &parsed));
  const Array a = array_of(parsed.table->GetPointer<const TableVector*>(field(2))->Get(0));
  EXPECT_EQ(a.null_count, 0);
  EXPECT_EQ(a.total_bytes, 24);
  EXPECT_EQ(at<double>(*made, a.offset), 1.0);

  columns[0].doubles.clear();
  made = feather_file_make(columns);
  ASSERT_TRUE(made.is_ok());
  ASSERT_NO_FATAL_FAILURE(parse(*made, &parsed));
  EXPECT_EQ(parsed.table->GetField<int64_t>(field(1), 0), 0);
  EXPECT_EQ(parsed.table->GetPointer<const TableVector*>(field(2))->size(), 1u);
}

TEST(FeatherWriter, RefusesUnequalColumnsAndNamelessOnes) {
  std::vector<FeatherColumn> columns(2);
  columns[0].name = "a";
  columns[0].doubles = {1.0, 2.0};
  columns[1].name = "b";
  columns[1].type = FeatherType::kUtf8;
  columns[1].strings = {"x"};
  auto made = feather_file_make(columns);
  ASSERT_FALSE(made.is_ok());
  EXPECT_EQ(made.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(made.status().message().find("column b has 1 rows"), std::string::npos);
  columns[1].strings.push_back("y");
  EXPECT_TRUE(feather_file_make(columns).is_ok());
  columns[0].name.clear();
  EXPECT_FALSE(feather_file_make(columns).is_ok());
}

TEST(FeatherWriter, DaysAreMidnightsInNanosecondsSinceTheEpoch) {
  constexpr int64_t kDay = 86'400'000'000'000;
  EXPECT_EQ(feather_day_nanoseconds(19700101), 0);
  EXPECT_EQ(feather_day_nanoseconds(19700102), kDay);
  EXPECT_EQ(feather_day_nanoseconds(19691231), -kDay);
  EXPECT_EQ(feather_day_nanoseconds(20000301), 11'017 * kDay);  // after a leap day of a century year
  EXPECT_EQ(feather_day_nanoseconds(20200101), 18'262 * kDay);
}

}  // namespace
}  // namespace kiln
