// Parquet tables for series_load (series_parquet.h): one SELECT of the needed columns through DuckDB, each cast in
// SQL to one of three shapes (DOUBLE, a DATE or BIGINT date, VARCHAR), read chunk by chunk into CsvRows. The path is
// a bound parameter and column names are quoted identifiers: no SQL is built from unescaped user text.
#include "apps/render/series_parquet.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/host_memory.h"
#include "io/duckdb_library.h"

namespace kiln {

namespace {

using duckdb::Type;

char parquet_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool parquet_name_equals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (parquet_lower(a[i]) != parquet_lower(b[i])) return false;
  }
  return true;
}

std::string_view parquet_trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\0'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

bool duckdb_type_is_integer(Type t) {
  switch (t) {
    case Type::kTinyInt:
    case Type::kSmallInt:
    case Type::kInteger:
    case Type::kBigInt:
    case Type::kUTinyInt:
    case Type::kUSmallInt:
    case Type::kUInteger:
    case Type::kUBigInt:
    case Type::kHugeInt:
    case Type::kUHugeInt:
      return true;
    default:
      return false;
  }
}

bool duckdb_type_is_number(Type t) {
  return duckdb_type_is_integer(t) || t == Type::kFloat || t == Type::kDouble || t == Type::kDecimal;
}

bool duckdb_type_is_date(Type t) {
  return t == Type::kDate || t == Type::kTimestamp || t == Type::kTimestampS || t == Type::kTimestampMs ||
         t == Type::kTimestampNs || t == Type::kTimestampTz;
}

std::string duckdb_type_name(Type t) {
  if (duckdb_type_is_integer(t)) return "integer";
  if (t == Type::kFloat || t == Type::kDouble || t == Type::kDecimal) return "floating-point";
  if (duckdb_type_is_date(t)) return t == Type::kDate ? "DATE" : "TIMESTAMP";
  if (t == Type::kVarchar) return "text";
  if (t == Type::kBoolean) return "boolean";
  return "DuckDB type " + std::to_string(static_cast<int>(t));
}

struct ParquetColumns {
  std::vector<std::string> names;
  std::vector<Type> types;

  // Index of the column named `want` (trimmed, case-insensitive); -1 when absent.
  int64_t find(std::string_view want) const {
    for (size_t i = 0; i < names.size(); ++i) {
      if (parquet_name_equals(names[i], parquet_trim(want))) return static_cast<int64_t>(i);
    }
    return -1;
  }
  std::string list() const {
    constexpr size_t kMaxListed = 16;
    std::string out;
    for (size_t i = 0; i < names.size() && i < kMaxListed; ++i) out += (i > 0 ? ", " : "") + names[i];
    if (names.size() > kMaxListed) out += ", ... (" + std::to_string(names.size()) + " in all)";
    return out;
  }
};

// yyyymmdd of an integer date; 0 when it is not one.
int32_t parquet_integer_date(int64_t value) {
  if (value < 1'000'01'01 || value > 9999'12'31) return 0;
  return date_parse(std::to_string(value));
}

// The SELECT's expression for each role: what DuckDB converts, so that the loop below sees three shapes only.
std::string parquet_number_sql(const ParquetColumns& table, int64_t c) {
  return "CAST(" + duckdb_identifier(table.names[static_cast<size_t>(c)]) + " AS DOUBLE)";
}

Status parquet_number_check(const ParquetColumns& table, int64_t c, const std::string& path) {
  const Type t = table.types[static_cast<size_t>(c)];
  if (duckdb_type_is_number(t)) return Status::ok();
  return invalid_argument(path + ": column '" + table.names[static_cast<size_t>(c)] + "' holds " + duckdb_type_name(t) +
                          " values (expected numbers)");
}

struct ParquetPlan {
  std::vector<int64_t> prices;  // file column per channel
  int64_t date = -1;
  int64_t symbol = -1;
  int64_t cap = -1;
};

Result<ParquetPlan> parquet_plan_make(const ParquetColumns& table, const std::string& path, const std::string& column,
                                      bool ohlc, const std::string& volume_column, const CsvPanelColumns& panel) {
  std::vector<std::string> wanted = ohlc ? std::vector<std::string>{"Open", "High", "Low", "Close"}
                                         : std::vector<std::string>{column.empty() ? std::string("Close") : column};
  if (!volume_column.empty()) wanted.push_back(volume_column);
  ParquetPlan plan;
  for (const std::string& want : wanted) {
    plan.prices.push_back(table.find(want));
    if (plan.prices.back() < 0) {
      return invalid_argument(path + ": no column '" + std::string(parquet_trim(want)) + "' (columns: " + table.list() +
                              ")");
    }
    KILN_TRY(parquet_number_check(table, plan.prices.back(), path));
  }
  plan.date = table.find("Date");
  if (plan.date >= 0) {
    const Type t = table.types[static_cast<size_t>(plan.date)];
    if (!duckdb_type_is_date(t) && !duckdb_type_is_integer(t) && t != Type::kVarchar) {
      return invalid_argument(path + ": column '" + table.names[static_cast<size_t>(plan.date)] + "' holds " +
                              duckdb_type_name(t) +
                              " values (expected DATE, TIMESTAMP, yyyymmdd integers or dates as text)");
    }
  }
  for (size_t i = 0; i < panel.symbol_columns.size() && plan.symbol < 0; ++i) {
    plan.symbol = table.find(panel.symbol_columns[i]);
  }
  if (plan.symbol < 0 && panel.symbol_required) {
    return invalid_argument(path + ": no symbol column '" + panel.symbol_columns.front() +
                            "' (columns: " + table.list() + ")");
  }
  if (plan.symbol >= 0) {
    const Type t = table.types[static_cast<size_t>(plan.symbol)];
    if (!duckdb_type_is_integer(t) && t != Type::kVarchar) {
      return invalid_argument(path + ": symbol column '" + table.names[static_cast<size_t>(plan.symbol)] + "' holds " +
                              duckdb_type_name(t) + " values (expected text or integer ids)");
    }
  }
  if (!panel.market_cap_column.empty()) {
    plan.cap = table.find(panel.market_cap_column);
    if (plan.cap < 0) {
      return invalid_argument(path + ": no market-cap column '" + panel.market_cap_column +
                              "' (columns: " + table.list() + ")");
    }
    KILN_TRY(parquet_number_check(table, plan.cap, path));
  }
  return plan;
}

std::string parquet_select_sql(const ParquetColumns& table, const ParquetPlan& plan) {
  std::string sql = "SELECT ";
  for (const int64_t c : plan.prices) sql += parquet_number_sql(table, c) + ", ";
  if (plan.date >= 0) {
    const std::string id = duckdb_identifier(table.names[static_cast<size_t>(plan.date)]);
    const Type t = table.types[static_cast<size_t>(plan.date)];
    sql += duckdb_type_is_date(t)      ? "CAST(" + id + " AS DATE), "
           : duckdb_type_is_integer(t) ? "CAST(" + id + " AS BIGINT), "
                                       : id + ", ";
  }
  if (plan.symbol >= 0)
    sql += "CAST(" + duckdb_identifier(table.names[static_cast<size_t>(plan.symbol)]) + " AS VARCHAR), ";
  if (plan.cap >= 0) sql += parquet_number_sql(table, plan.cap) + ", ";
  sql.resize(sql.size() - 2);
  return sql + " FROM read_parquet($1, binary_as_string = true)";
}

// The file's columns (names as it spells them, and DuckDB's types) and its rows, from the footer.
Status parquet_describe(DuckDbConnection& db, const std::string& path, ParquetColumns* table, int64_t* rows) {
  KILN_TRY_ASSIGN(DuckDbResult schema,
                  db.query("SELECT * FROM read_parquet($1, binary_as_string = true) LIMIT 0", {path}, path));
  for (uint64_t c = 0; c < schema.column_count(); ++c) {
    table->names.push_back(schema.column_name(c));
    table->types.push_back(schema.column_type(c));
  }
  KILN_TRY_ASSIGN(DuckDbResult count, db.query("SELECT count(*) FROM read_parquet($1)", {path}, path));
  KILN_TRY_ASSIGN(DuckDbChunk chunk, count.next(path));
  if (chunk.rows() != 1) return io_error(path + ": cannot count the rows");
  *rows = chunk.column(0).value<int64_t>(0);
  return Status::ok();
}

// Appends the chunk's rows to `out`.
Status parquet_chunk_read(const DuckDbChunk& chunk, const ParquetPlan& plan, const ParquetColumns& table,
                          const std::string& path, std::unordered_map<std::string, int32_t>& symbol_ids, CsvRows* out) {
  Series& series = out->series;
  const uint64_t n = chunk.rows();
  const size_t channels = plan.prices.size();
  const size_t first_value = series.values.size();
  series.values.resize(first_value + n * channels);
  for (size_t c = 0; c < channels; ++c) {
    const DuckDbColumn values = chunk.column(c);
    for (uint64_t r = 0; r < n; ++r) {
      series.values[first_value + r * channels + c] =
          values.valid(r) ? static_cast<float>(values.value<double>(r)) : std::numeric_limits<float>::quiet_NaN();
    }
  }
  uint64_t next = channels;
  if (plan.date >= 0) {
    const DuckDbColumn dates = chunk.column(next++);
    const Type t = table.types[static_cast<size_t>(plan.date)];
    for (uint64_t r = 0; r < n; ++r) {
      int32_t date = 0;
      if (dates.valid(r)) {
        date = duckdb_type_is_date(t)      ? date_of_day(dates.value<int32_t>(r))
               : duckdb_type_is_integer(t) ? parquet_integer_date(dates.value<int64_t>(r))
                                           : date_parse(parquet_trim(dates.text(r)));
      }
      series.dates.push_back(date);
    }
  }
  if (plan.symbol >= 0) {
    const DuckDbColumn symbols = chunk.column(next++);
    for (uint64_t r = 0; r < n; ++r) {
      const std::string_view text = symbols.valid(r) ? parquet_trim(symbols.text(r)) : std::string_view();
      if (text.empty()) {
        return io_error(path + ": data row " + std::to_string(series.rows + static_cast<int64_t>(r) + 1) +
                        ": no symbol");
      }
      const auto [at, added] =
          symbol_ids.try_emplace(std::string(text), static_cast<int32_t>(out->symbol_names.size()));
      if (added) out->symbol_names.emplace_back(text);
      out->symbol_of_row.push_back(at->second);
    }
  }
  if (plan.cap >= 0) {
    const DuckDbColumn caps = chunk.column(next++);
    for (uint64_t r = 0; r < n; ++r) {
      out->market_caps.push_back(caps.valid(r) ? static_cast<float>(caps.value<double>(r))
                                               : std::numeric_limits<float>::quiet_NaN());
    }
  }
  series.rows += static_cast<int64_t>(n);
  return Status::ok();
}

}  // namespace

bool parquet_file_is(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  char magic[4] = {};
  const size_t got = std::fread(magic, 1, sizeof(magic), file);
  std::fclose(file);
  return got == sizeof(magic) && std::memcmp(magic, "PAR1", sizeof(magic)) == 0;
}

Result<CsvRows> series_load_parquet_rows(const std::string& path, const std::string& column, bool ohlc,
                                         const std::string& volume_column, const CsvPanelColumns& panel) {
  KILN_TRY_ASSIGN(const duckdb::Api* api, duckdb_api(path + ": reading Parquet"));
  if (path.find_first_of("*?[") != std::string::npos) {
    return invalid_argument(path + ": DuckDB reads a name with *, ? or [ as a pattern of names; rename the file");
  }
  // Half of what this process may use bounds the series read (checked below); DuckDB's buffers get half of that.
  const uint64_t budget = host_memory_limit_bytes() / 2;
  KILN_TRY_ASSIGN(DuckDbConnection db, DuckDbConnection::open(api, budget / 2));
  ParquetColumns table;
  int64_t rows = 0;
  KILN_TRY(parquet_describe(db, path, &table, &rows));
  KILN_TRY_ASSIGN(const ParquetPlan plan, parquet_plan_make(table, path, column, ohlc, volume_column, panel));
  if (rows <= 0) return io_error(path + ": no data rows");
  const uint64_t per_row = plan.prices.size() * sizeof(float) + sizeof(int32_t) * 2 + sizeof(float);
  if (static_cast<uint64_t>(rows) > budget / per_row) {
    return Status(Errc::kOutOfMemory, path + ": " + std::to_string(rows) + " rows need " +
                                          std::to_string((static_cast<uint64_t>(rows) * per_row) >> 20) +
                                          " MiB, more than half the memory this process may use (" +
                                          std::to_string(budget >> 20) + " MiB)");
  }

  CsvRows out;
  Series& series = out.series;
  series.channels = static_cast<int32_t>(plan.prices.size());
  series.layers = volume_column.empty() ? 0 : 1;
  series.source = path;
  series.column = ohlc ? std::string("Open,High,Low,Close") : table.names[static_cast<size_t>(plan.prices.front())];
  series.values.reserve(static_cast<size_t>(rows) * plan.prices.size());
  std::unordered_map<std::string, int32_t> symbol_ids;
  KILN_TRY_ASSIGN(DuckDbResult result, db.query(parquet_select_sql(table, plan), {path}, path));
  for (;;) {
    KILN_TRY_ASSIGN(const DuckDbChunk chunk, result.next(path));
    if (chunk.empty()) break;
    if (series.rows + static_cast<int64_t>(chunk.rows()) > rows) {
      return io_error(path + ": more rows than the file's footer declares (" + std::to_string(rows) + ")");
    }
    KILN_TRY(parquet_chunk_read(chunk, plan, table, path, symbol_ids, &out));
  }
  if (series.rows == 0) return io_error(path + ": no data rows");
  return out;
}

}  // namespace kiln
