# DuckDB's C library (Parquet input and Parquet label tables) is not linked: kiln loads it at run time from the kiln
# cache (src/io/duckdb_library.cpp), where make deps (tools/deps/fetch_deps.py) unpacks the npm package that
# deps/manifest.json pins. The build only records where it is and which package it comes from.
file(READ ${PROJECT_SOURCE_DIR}/deps/manifest.json kiln_deps_manifest)
string(JSON KILN_DUCKDB_PACKAGE GET "${kiln_deps_manifest}" packages duckdb npm)
set(KILN_DUCKDB_LIBRARY "${KILN_CACHE}/duckdb/lib/libduckdb.so")
if(EXISTS ${KILN_DUCKDB_LIBRARY})
  set(KILN_HAS_DUCKDB "ON (${KILN_DUCKDB_LIBRARY})")
else()
  set(KILN_HAS_DUCKDB "OFF until make deps (${KILN_DUCKDB_PACKAGE})")
endif()
