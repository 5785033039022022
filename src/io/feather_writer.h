// Feather V1 tables ("FEA1", the original Feather format of wesm/feather's FORMAT.md, format version 2): what
// pandas.read_feather (pyarrow) and the feather package's read_dataframe read. The file is "FEA1" (padded to 8 bytes),
// each column's buffers (a validity bitmap where the column has nulls, int32 offsets for strings, then the values;
// each padded to 8 bytes), the CTable flatbuffer describing them, its size (uint32) and "FEA1" again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

enum class FeatherType : uint8_t {
  kDouble = 0,      // float64; NaN is stored as null (as pandas' to_feather does) and reads back as NaN
  kUtf8,            // strings, no nulls
  kTimestampNs,     // int64 nanoseconds since 1970-01-01 UTC, no time zone: pandas datetime64[ns]
};

struct FeatherColumn {
  std::string name;
  FeatherType type = FeatherType::kDouble;
  std::vector<double> doubles;       // kDouble
  std::vector<int64_t> nanoseconds;  // kTimestampNs
  std::vector<std::string> strings;  // kUtf8

  int64_t size() const;
};

// The whole file's bytes. InvalidArgument when the columns differ in length, a name is empty or a string column's
// bytes pass int32 offsets (2 GiB).
Result<std::string> feather_file_make(const std::vector<FeatherColumn>& columns);

// Nanoseconds from 1970-01-01 to the day yyyymmdd (proleptic Gregorian), as pandas stores a date's midnight.
int64_t feather_day_nanoseconds(int32_t yyyymmdd);

}  // namespace kiln
