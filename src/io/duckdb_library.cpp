// DuckDB's C library loaded at run time (duckdb_library.h).
#include "io/duckdb_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#ifndef KILN_DUCKDB_LIBRARY
#define KILN_DUCKDB_LIBRARY ""
#endif
#ifndef KILN_DUCKDB_PACKAGE
#define KILN_DUCKDB_PACKAGE "@duckdb/node-bindings-linux-x64"
#endif

namespace kiln {

namespace {

struct DuckDbLoaded {
  duckdb::Api api{};
  std::string error;  // why it is not loaded; "" when it is
};

template <typename F>
bool duckdb_resolve(void* library, const char* name, F*& out, std::string& missing) {
  out = reinterpret_cast<F*>(dlsym(library, name));
  if (out == nullptr && missing.empty()) missing = name;
  return out != nullptr;
}

DuckDbLoaded duckdb_load(const std::string& path) {
  DuckDbLoaded loaded;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    loaded.error = "it is not at " + path;
    return loaded;
  }
  void* library = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);  // kept loaded for the process
  if (library == nullptr) {
    const char* why = dlerror();
    loaded.error = path + " cannot be loaded: " + std::string(why != nullptr ? why : "dlopen failed");
    return loaded;
  }
  duckdb::Api& a = loaded.api;
  std::string missing;
  duckdb_resolve(library, "duckdb_library_version", a.library_version, missing);
  duckdb_resolve(library, "duckdb_create_config", a.create_config, missing);
  duckdb_resolve(library, "duckdb_set_config", a.set_config, missing);
  duckdb_resolve(library, "duckdb_destroy_config", a.destroy_config, missing);
  duckdb_resolve(library, "duckdb_open_ext", a.open_ext, missing);
  duckdb_resolve(library, "duckdb_close", a.close, missing);
  duckdb_resolve(library, "duckdb_free", a.free, missing);
  duckdb_resolve(library, "duckdb_connect", a.connect, missing);
  duckdb_resolve(library, "duckdb_disconnect", a.disconnect, missing);
  duckdb_resolve(library, "duckdb_query", a.query, missing);
  duckdb_resolve(library, "duckdb_prepare", a.prepare, missing);
  duckdb_resolve(library, "duckdb_prepare_error", a.prepare_error, missing);
  duckdb_resolve(library, "duckdb_destroy_prepare", a.destroy_prepare, missing);
  duckdb_resolve(library, "duckdb_bind_varchar", a.bind_varchar, missing);
  duckdb_resolve(library, "duckdb_execute_prepared_streaming", a.execute_prepared_streaming, missing);
  duckdb_resolve(library, "duckdb_result_error", a.result_error, missing);
  duckdb_resolve(library, "duckdb_destroy_result", a.destroy_result, missing);
  duckdb_resolve(library, "duckdb_column_count", a.column_count, missing);
  duckdb_resolve(library, "duckdb_column_name", a.column_name, missing);
  duckdb_resolve(library, "duckdb_column_type", a.column_type, missing);
  duckdb_resolve(library, "duckdb_fetch_chunk", a.fetch_chunk, missing);
  duckdb_resolve(library, "duckdb_data_chunk_get_size", a.data_chunk_get_size, missing);
  duckdb_resolve(library, "duckdb_data_chunk_get_vector", a.data_chunk_get_vector, missing);
  duckdb_resolve(library, "duckdb_destroy_data_chunk", a.destroy_data_chunk, missing);
  duckdb_resolve(library, "duckdb_vector_get_data", a.vector_get_data, missing);
  duckdb_resolve(library, "duckdb_vector_get_validity", a.vector_get_validity, missing);
  duckdb_resolve(library, "duckdb_appender_create", a.appender_create, missing);
  duckdb_resolve(library, "duckdb_appender_error", a.appender_error, missing);
  duckdb_resolve(library, "duckdb_appender_end_row", a.appender_end_row, missing);
  duckdb_resolve(library, "duckdb_appender_flush", a.appender_flush, missing);
  duckdb_resolve(library, "duckdb_appender_destroy", a.appender_destroy, missing);
  duckdb_resolve(library, "duckdb_append_double", a.append_double, missing);
  duckdb_resolve(library, "duckdb_append_int64", a.append_int64, missing);
  duckdb_resolve(library, "duckdb_append_varchar_length", a.append_varchar_length, missing);
  duckdb_resolve(library, "duckdb_append_null", a.append_null, missing);
  if (!missing.empty()) loaded.error = path + " lacks " + missing + " (not the DuckDB 1.5 C API)";
  return loaded;
}

const DuckDbLoaded& duckdb_loaded() {
  static const DuckDbLoaded loaded = duckdb_load(duckdb_library_path());
  return loaded;
}

}  // namespace

std::string duckdb_library_path() {
  if (const char* explicit_path = std::getenv("KILN_DUCKDB_LIBRARY"); explicit_path != nullptr && *explicit_path) {
    return explicit_path;
  }
  if (const char* cache = std::getenv("KILN_CACHE"); cache != nullptr && *cache) {
    return (std::filesystem::path(cache) / "duckdb" / "lib" / "libduckdb.so").string();
  }
  return KILN_DUCKDB_LIBRARY;
}

std::string duckdb_package() { return KILN_DUCKDB_PACKAGE; }

Result<const duckdb::Api*> duckdb_api(const std::string& purpose) {
  const DuckDbLoaded& loaded = duckdb_loaded();
  if (!loaded.error.empty()) {
    return unsupported_format(purpose + " needs DuckDB's C library, libduckdb.so from the npm package " +
                              duckdb_package() + " (MIT); " + loaded.error +
                              ": fetch it with make deps (or python3 tools/deps/fetch_deps.py)");
  }
  return &loaded.api;
}

std::string duckdb_identifier(std::string_view name) {
  std::string out = "\"";
  for (const char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string duckdb_string_literal(std::string_view text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string duckdb_message(const char* error) {
  if (error == nullptr) return "unknown DuckDB error";
  const std::string text(error);
  const size_t end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

std::string_view DuckDbColumn::text(uint64_t row) const {
  const duckdb::String& s = static_cast<const duckdb::String*>(data)[row];
  const uint32_t length = s.inlined.length;
  return length <= sizeof(s.inlined.inlined) ? std::string_view(s.inlined.inlined, length)
                                             : std::string_view(s.pointer.ptr, length);
}

DuckDbChunk::~DuckDbChunk() {
  if (m_chunk != nullptr) m_api->destroy_data_chunk(&m_chunk);
}

DuckDbChunk::DuckDbChunk(DuckDbChunk&& other) noexcept
    : m_api(other.m_api), m_chunk(std::exchange(other.m_chunk, nullptr)) {}

uint64_t DuckDbChunk::rows() const { return m_chunk == nullptr ? 0 : m_api->data_chunk_get_size(m_chunk); }

DuckDbColumn DuckDbChunk::column(uint64_t index) const {
  const duckdb::Vector vector = m_api->data_chunk_get_vector(m_chunk, index);
  return DuckDbColumn{m_api->vector_get_data(vector), m_api->vector_get_validity(vector)};
}

DuckDbResult::~DuckDbResult() {
  if (m_owned) m_api->destroy_result(&m_result);
}

DuckDbResult::DuckDbResult(DuckDbResult&& other) noexcept
    : m_api(other.m_api), m_result(other.m_result), m_owned(std::exchange(other.m_owned, false)) {}

uint64_t DuckDbResult::column_count() { return m_api->column_count(&m_result); }

std::string DuckDbResult::column_name(uint64_t index) {
  const char* name = m_api->column_name(&m_result, index);
  return name != nullptr ? name : "";
}

duckdb::Type DuckDbResult::column_type(uint64_t index) { return m_api->column_type(&m_result, index); }

Result<DuckDbChunk> DuckDbResult::next(const std::string& what) {
  DuckDbChunk chunk(m_api, m_api->fetch_chunk(m_result));
  if (chunk.empty()) {
    const char* error = m_api->result_error(&m_result);
    if (error != nullptr && *error != '\0') return io_error(what + ": " + duckdb_message(error));
  }
  return chunk;
}

Result<DuckDbConnection> DuckDbConnection::open(const duckdb::Api* api, uint64_t memory_limit_bytes) {
  DuckDbConnection out;
  out.m_api = api;
  duckdb::Config config = nullptr;
  if (api->create_config(&config) != duckdb::kSuccess) return io_error("DuckDB: cannot create a configuration");
  const std::string memory_limit = std::to_string(std::max<uint64_t>(memory_limit_bytes >> 20, 64)) + "MiB";
  const std::pair<const char*, std::string> settings[] = {
      {"threads", "1"},
      {"memory_limit", memory_limit},
      {"temp_directory", ""},  // never spill to disk
      {"autoinstall_known_extensions", "false"},
      {"autoload_known_extensions", "false"},
  };
  for (const auto& [name, value] : settings) {
    if (api->set_config(config, name, value.c_str()) != duckdb::kSuccess) {
      api->destroy_config(&config);
      return io_error(std::string("DuckDB: cannot set ") + name);
    }
  }
  char* error = nullptr;
  const duckdb::State opened = api->open_ext(nullptr, &out.m_database, config, &error);
  api->destroy_config(&config);
  if (opened != duckdb::kSuccess) {
    const std::string message = duckdb_message(error);
    if (error != nullptr) api->free(error);
    return io_error("DuckDB: cannot open a database: " + message);
  }
  if (api->connect(out.m_database, &out.m_connection) != duckdb::kSuccess) {
    return io_error("DuckDB: cannot connect");
  }
  KILN_TRY(out.execute("SET TimeZone = 'UTC'", "DuckDB"));  // a TIMESTAMPTZ's date is its UTC date
  return out;
}

DuckDbConnection::~DuckDbConnection() {
  if (m_connection != nullptr) m_api->disconnect(&m_connection);
  if (m_database != nullptr) m_api->close(&m_database);
}

DuckDbConnection::DuckDbConnection(DuckDbConnection&& other) noexcept
    : m_api(other.m_api),
      m_database(std::exchange(other.m_database, nullptr)),
      m_connection(std::exchange(other.m_connection, nullptr)) {}

Status DuckDbConnection::execute(const std::string& sql, const std::string& what) {
  duckdb::Result result{};
  const duckdb::State state = m_api->query(m_connection, sql.c_str(), &result);
  const std::string message = state == duckdb::kSuccess ? "" : duckdb_message(m_api->result_error(&result));
  m_api->destroy_result(&result);
  return state == duckdb::kSuccess ? Status::ok() : io_error(what + ": " + message);
}

Result<DuckDbResult> DuckDbConnection::query(const std::string& sql, const std::vector<std::string>& parameters,
                                             const std::string& what) {
  duckdb::Prepared prepared = nullptr;
  if (m_api->prepare(m_connection, sql.c_str(), &prepared) != duckdb::kSuccess) {
    const std::string message = duckdb_message(m_api->prepare_error(prepared));
    m_api->destroy_prepare(&prepared);
    return io_error(what + ": " + message);
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (m_api->bind_varchar(prepared, i + 1, parameters[i].c_str()) != duckdb::kSuccess) {
      m_api->destroy_prepare(&prepared);
      return io_error(what + ": cannot bind parameter " + std::to_string(i + 1));
    }
  }
  duckdb::Result result{};
  const duckdb::State state = m_api->execute_prepared_streaming(prepared, &result);
  m_api->destroy_prepare(&prepared);
  DuckDbResult owned(m_api, result);
  if (state != duckdb::kSuccess) return io_error(what + ": " + duckdb_message(m_api->result_error(&result)));
  return owned;
}

}  // namespace kiln
