// Parquet tables through DuckDB (parquet_writer.h): the columns go into an in-memory table through DuckDB's
// appender, then COPY writes them as one Parquet file.
#include "io/parquet_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <string>
#include <vector>

#include "core/host_memory.h"
#include "io/duckdb_library.h"
#include "io/durable_file.h"

namespace kiln {

namespace {

const char* parquet_sql_type(FeatherType type) {
  switch (type) {
    case FeatherType::kUtf8:
      return "VARCHAR";
    case FeatherType::kTimestampNs:
      return "BIGINT";  // nanoseconds: made TIMESTAMP_NS by the COPY
    case FeatherType::kDouble:
      break;
  }
  return "DOUBLE";
}

// Closes the appender (flushing its rows into the table) when it goes out of scope.
class ParquetAppender {
 public:
  ParquetAppender(const duckdb::Api* api, duckdb::Appender appender) : m_api(api), m_appender(appender) {}
  ~ParquetAppender() {
    if (m_appender != nullptr) m_api->appender_destroy(&m_appender);
  }
  ParquetAppender(const ParquetAppender&) = delete;
  ParquetAppender& operator=(const ParquetAppender&) = delete;
  duckdb::Appender get() const { return m_appender; }

 private:
  const duckdb::Api* m_api;
  duckdb::Appender m_appender;
};

Status parquet_rows_append(DuckDbConnection& db, const std::vector<FeatherColumn>& columns, const std::string& path) {
  const duckdb::Api* api = db.api();
  duckdb::Appender raw = nullptr;
  const bool created = api->appender_create(db.handle(), nullptr, "kiln_table", &raw) == duckdb::kSuccess;
  ParquetAppender appender(api, raw);
  const auto failed = [&]() {
    return io_error(path +
                    ": DuckDB's appender: " + duckdb_message(raw != nullptr ? api->appender_error(raw) : nullptr));
  };
  if (!created) return failed();
  const int64_t rows = columns.front().size();
  for (int64_t r = 0; r < rows; ++r) {
    const auto i = static_cast<size_t>(r);
    for (const FeatherColumn& column : columns) {
      duckdb::State state = duckdb::kSuccess;
      if (column.type == FeatherType::kUtf8) {
        state = api->append_varchar_length(raw, column.strings[i].data(), column.strings[i].size());
      } else if (column.type == FeatherType::kTimestampNs) {
        state = api->append_int64(raw, column.nanoseconds[i]);
      } else {
        state = std::isnan(column.doubles[i]) ? api->append_null(raw) : api->append_double(raw, column.doubles[i]);
      }
      if (state != duckdb::kSuccess) return failed();
    }
    if (api->appender_end_row(raw) != duckdb::kSuccess) return failed();
  }
  if (api->appender_flush(raw) != duckdb::kSuccess) return failed();
  return Status::ok();
}

}  // namespace

Status parquet_file_write(const std::string& path, const std::vector<FeatherColumn>& columns) {
  KILN_TRY_ASSIGN(const duckdb::Api* api, duckdb_api(path + ": writing Parquet"));
  if (columns.empty()) return invalid_argument(path + ": a table needs a column");
  for (const FeatherColumn& column : columns) {
    if (column.size() != columns.front().size()) return invalid_argument(path + ": the columns differ in length");
    if (column.name.empty()) return invalid_argument(path + ": a column has no name");
  }
  KILN_TRY_ASSIGN(DuckDbConnection db, DuckDbConnection::open(api, host_memory_limit_bytes() / 4));
  std::string create = "CREATE TABLE kiln_table (";
  std::string select = "SELECT ";
  for (size_t c = 0; c < columns.size(); ++c) {
    const std::string name = duckdb_identifier(columns[c].name);
    create += (c > 0 ? ", " : "") + name + " " + parquet_sql_type(columns[c].type);
    select += (c > 0 ? ", " : "") +
              (columns[c].type == FeatherType::kTimestampNs ? "make_timestamp_ns(" + name + ") AS " + name : name);
  }
  KILN_TRY(db.execute(create + ")", path));
  KILN_TRY(parquet_rows_append(db, columns, path));
  const std::string tmp = path + ".tmp";
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) return errno_status(tmp + ": cannot remove");
  Status written =
      db.execute("COPY (" + select + " FROM kiln_table) TO " + duckdb_string_literal(tmp) + " (FORMAT parquet)", path);
  if (written.is_ok()) written = file_commit(tmp, path);
  if (!written.is_ok()) ::unlink(tmp.c_str());
  return written;
}

}  // namespace kiln
