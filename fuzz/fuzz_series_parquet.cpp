// The Parquet series reader (kiln render x.parquet), through DuckDB's C library when it is in the kiln cache
// (without it every input ends at the error that asks for make deps): one series by its Close column, and a
// long-format panel with OHLC, volume and market cap (seeded by corpus/series_parquet: files DuckDB wrote).
#include "fuzz_input.h"
#include "kiln/apps/render.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::SeriesSource source;
  source.path = kiln::fuzz::input_file(data, size, ".parquet");
  (void)kiln::series_load(source);
  source.ohlc = source.volume = true;
  source.symbol_column = "Ticker";
  source.market_cap_column = "Cap";
  (void)kiln::series_load(source);
  return 0;
}
