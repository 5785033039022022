// The few declarations of DuckDB's C API that kiln uses, written here because no npm package of DuckDB 1.5.6 ships
// duckdb.h (the library comes from @duckdb/node-bindings-linux-x64@1.5.6-r.1, deps/manifest.json). They follow the
// documented C API of DuckDB 1.5 (duckdb.org/docs/api/c/overview, .../api/c/api): handles are opaque pointers,
// duckdb_result and duckdb_string_t are the structs of duckdb.h, and the functions are resolved by name with dlsym
// (io/duckdb_library.cpp), so kiln builds and runs without the library.
#pragma once

#include <cstdint>

namespace kiln::duckdb {

using idx_t = uint64_t;
using State = int32_t;  // duckdb_state
inline constexpr State kSuccess = 0;

using Database = void*;     // duckdb_database
using Connection = void*;   // duckdb_connection
using Config = void*;       // duckdb_config
using Prepared = void*;     // duckdb_prepared_statement
using DataChunk = void*;    // duckdb_data_chunk
using Vector = void*;       // duckdb_vector
using Appender = void*;     // duckdb_appender

// duckdb_type: the values kiln tells apart.
enum Type : int32_t {
  kBoolean = 1, kTinyInt = 2, kSmallInt = 3, kInteger = 4, kBigInt = 5, kUTinyInt = 6, kUSmallInt = 7,
  kUInteger = 8, kUBigInt = 9, kFloat = 10, kDouble = 11, kTimestamp = 12, kDate = 13, kHugeInt = 16,
  kVarchar = 17, kDecimal = 19, kTimestampS = 20, kTimestampMs = 21, kTimestampNs = 22, kTimestampTz = 31,
  kUHugeInt = 32,
};

// duckdb_result: its members are deprecated; only the library reads them.
struct Result {
  idx_t deprecated_column_count;
  idx_t deprecated_row_count;
  idx_t deprecated_rows_changed;
  void* deprecated_columns;
  char* deprecated_error_message;
  void* internal_data;
};

// duckdb_string_t: up to 12 bytes inline, else a 4-byte prefix and a pointer.
union String {
  struct {
    uint32_t length;
    char prefix[4];
    const char* ptr;
  } pointer;
  struct {
    uint32_t length;
    char inlined[12];
  } inlined;
};
static_assert(sizeof(String) == 16);

struct Api {
  const char* (*library_version)();
  State (*create_config)(Config*);
  State (*set_config)(Config, const char*, const char*);
  void (*destroy_config)(Config*);
  State (*open_ext)(const char*, Database*, Config, char**);
  void (*close)(Database*);
  void (*free)(void*);
  State (*connect)(Database, Connection*);
  void (*disconnect)(Connection*);
  State (*query)(Connection, const char*, Result*);
  State (*prepare)(Connection, const char*, Prepared*);
  const char* (*prepare_error)(Prepared);
  void (*destroy_prepare)(Prepared*);
  State (*bind_varchar)(Prepared, idx_t, const char*);
  State (*execute_prepared_streaming)(Prepared, Result*);
  const char* (*result_error)(Result*);
  void (*destroy_result)(Result*);
  idx_t (*column_count)(Result*);
  const char* (*column_name)(Result*, idx_t);
  Type (*column_type)(Result*, idx_t);
  DataChunk (*fetch_chunk)(Result);  // takes the struct by value, as duckdb.h declares it
  idx_t (*data_chunk_get_size)(DataChunk);
  Vector (*data_chunk_get_vector)(DataChunk, idx_t);
  void (*destroy_data_chunk)(DataChunk*);
  void* (*vector_get_data)(Vector);
  uint64_t* (*vector_get_validity)(Vector);
  State (*appender_create)(Connection, const char*, const char*, Appender*);
  const char* (*appender_error)(Appender);
  State (*appender_end_row)(Appender);
  State (*appender_flush)(Appender);
  State (*appender_destroy)(Appender*);
  State (*append_double)(Appender, double);
  State (*append_int64)(Appender, int64_t);
  State (*append_varchar_length)(Appender, const char*, idx_t);
  State (*append_null)(Appender);
};

}  // namespace kiln::duckdb
