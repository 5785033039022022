// Parquet tables written through DuckDB's C library (io/duckdb_library.h), from the columns a Feather table is made
// of (io/feather_writer.h): float64 with NaN stored as NULL, UTF-8 text, and timestamps in nanoseconds
// (TIMESTAMP_NS, pandas' datetime64[ns]). A label table thus has the same columns and types in both formats.
#pragma once

#include <string>
#include <vector>

#include "io/feather_writer.h"
#include "kiln/status.h"

namespace kiln {

// Writes the table to `path`.tmp and renames it over `path` (fsynced: readers see the old file or the new one).
// UnsupportedFormat naming the npm package and `make deps` when DuckDB's library is not in the kiln cache;
// InvalidArgument when the columns differ in length.
Status parquet_file_write(const std::string& path, const std::vector<FeatherColumn>& columns);

}  // namespace kiln
