// DuckDB's C library (libduckdb.so), found at run time in the kiln cache and loaded with dlopen: kiln builds and runs
// without it, and says how to fetch it (make deps) when a Parquet file is to be read or written. Small RAII wrappers
// over an in-memory database, a result read chunk by chunk, and one column of a chunk.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/duckdb_capi.h"
#include "kiln/status.h"

namespace kiln {

// Where kiln loads the library from: $KILN_DUCKDB_LIBRARY when set, else $KILN_CACHE/duckdb/lib/libduckdb.so, else
// the same path under the cache the build was configured with.
std::string duckdb_library_path();
// The npm package the library comes from ("@duckdb/node-bindings-linux-x64@1.5.6-r.1").
std::string duckdb_package();
// The library, loaded once and kept. UnsupportedFormat "<purpose> needs DuckDB's C library ..." naming the package,
// the path and `make deps` when it is missing or cannot be loaded.
Result<const duckdb::Api*> duckdb_api(const std::string& purpose);

// SQL text for a name or a string, quotes doubled: "a""b", 'it''s'.
std::string duckdb_identifier(std::string_view name);
std::string duckdb_string_literal(std::string_view text);

// One column of a chunk: its values as the C API lays them out, and which rows are NULL.
struct DuckDbColumn {
  const void* data = nullptr;
  const uint64_t* validity = nullptr;  // nullptr: no NULL in the chunk

  bool valid(uint64_t row) const { return validity == nullptr || ((validity[row >> 6] >> (row & 63)) & 1) != 0; }
  template <typename T>
  T value(uint64_t row) const {
    return static_cast<const T*>(data)[row];
  }
  std::string_view text(uint64_t row) const;  // a VARCHAR
};

class DuckDbChunk {
 public:
  DuckDbChunk() = default;
  DuckDbChunk(const duckdb::Api* api, duckdb::DataChunk chunk) : m_api(api), m_chunk(chunk) {}
  ~DuckDbChunk();
  DuckDbChunk(DuckDbChunk&& other) noexcept;
  DuckDbChunk& operator=(DuckDbChunk&&) = delete;
  DuckDbChunk(const DuckDbChunk&) = delete;

  bool empty() const { return m_chunk == nullptr; }  // the result's end
  uint64_t rows() const;
  DuckDbColumn column(uint64_t index) const;

 private:
  const duckdb::Api* m_api = nullptr;
  duckdb::DataChunk m_chunk = nullptr;
};

class DuckDbResult {
 public:
  DuckDbResult(const duckdb::Api* api, const duckdb::Result& result) : m_api(api), m_result(result) {}
  ~DuckDbResult();
  DuckDbResult(DuckDbResult&& other) noexcept;
  DuckDbResult& operator=(DuckDbResult&&) = delete;
  DuckDbResult(const DuckDbResult&) = delete;

  uint64_t column_count();
  std::string column_name(uint64_t index);
  duckdb::Type column_type(uint64_t index);
  // The next chunk; an empty one at the end. IoError "<what>: <DuckDB's message>" when reading fails.
  Result<DuckDbChunk> next(const std::string& what);

 private:
  const duckdb::Api* m_api;
  duckdb::Result m_result;
  bool m_owned = true;
};

// An in-memory database on one thread, with a memory limit and no extension loaded or installed at run time, and
// UTC as its time zone.
class DuckDbConnection {
 public:
  static Result<DuckDbConnection> open(const duckdb::Api* api, uint64_t memory_limit_bytes);
  ~DuckDbConnection();
  DuckDbConnection(DuckDbConnection&& other) noexcept;
  DuckDbConnection& operator=(DuckDbConnection&&) = delete;
  DuckDbConnection(const DuckDbConnection&) = delete;

  const duckdb::Api* api() const { return m_api; }
  duckdb::Connection handle() const { return m_connection; }
  // Runs a statement that returns nothing kiln reads. IoError "<what>: <DuckDB's message>".
  Status execute(const std::string& sql, const std::string& what);
  // Runs `sql` with its $1, $2, ... bound to `parameters` (as VARCHAR), its result streamed chunk by chunk.
  Result<DuckDbResult> query(const std::string& sql, const std::vector<std::string>& parameters,
                             const std::string& what);

 private:
  DuckDbConnection() = default;
  const duckdb::Api* m_api = nullptr;
  duckdb::Database m_database = nullptr;
  duckdb::Connection m_connection = nullptr;
};

// DuckDB's messages end with the SQL text and a caret on lines of their own: the first line is the reason.
std::string duckdb_message(const char* error);

}  // namespace kiln
