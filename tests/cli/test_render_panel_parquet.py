"""kiln render on Parquet input and jkx-dat's Parquet label tables (issue 55), both through DuckDB's C library, which
kiln loads from the kiln cache (make deps). The Parquet files are written here by that same library through ctypes
(COPY ... TO ... (FORMAT parquet)) from the test's CSV with real column types: DATE (or TIMESTAMP, text, yyyymmdd
integers), VARCHAR or BIGINT symbols, DOUBLE prices. The same panel as CSV and as Parquet gives the same HDF5
datasets, byte for byte; bad files and missing columns give clear errors; the Parquet labels equal the CSV labels row
for row. Without the library the tests that need it skip (saying so); the one that checks kiln's message runs always.
"""
import csv
import ctypes
import json
import os
import resource
import subprocess
from pathlib import Path

import pytest

from conftest import KILN, run_kiln
from test_render_panel import check_output, expected, make_panel, render, write_long_csv
from test_render_panel_hdf5 import assert_same_datasets

PRICES = ("Open", "High", "Low", "Close", "Volume", "Cap")


def library_path():
    explicit = os.environ.get("KILN_DUCKDB_LIBRARY")
    if explicit:
        return Path(explicit)
    cache = Path(os.environ.get("KILN_CACHE") or Path.home() / ".cache" / "kiln")
    return cache / "duckdb" / "lib" / "libduckdb.so"


class DuckDbResult(ctypes.Structure):  # duckdb_result of duckdb.h
    _fields_ = [("column_count", ctypes.c_uint64), ("row_count", ctypes.c_uint64), ("rows_changed", ctypes.c_uint64),
                ("columns", ctypes.c_void_p), ("error", ctypes.c_char_p), ("internal", ctypes.c_void_p)]


class DuckDb:
    """An in-memory DuckDB through its C API: query() returns the rows as text (None for NULL)."""

    def __init__(self, path):
        self.lib = lib = ctypes.CDLL(str(path))
        lib.duckdb_value_varchar.restype = ctypes.c_void_p
        lib.duckdb_result_error.restype = ctypes.c_char_p
        lib.duckdb_row_count.restype = lib.duckdb_column_count.restype = ctypes.c_uint64
        lib.duckdb_value_is_null.restype = ctypes.c_bool
        self.db, self.con = ctypes.c_void_p(), ctypes.c_void_p()
        assert lib.duckdb_open(None, ctypes.byref(self.db)) == 0
        assert lib.duckdb_connect(self.db, ctypes.byref(self.con)) == 0

    def query(self, sql):
        lib, result = self.lib, DuckDbResult()
        state = lib.duckdb_query(self.con, sql.encode(), ctypes.byref(result))
        try:
            assert state == 0, lib.duckdb_result_error(ctypes.byref(result)).decode()
            rows = []
            for r in range(lib.duckdb_row_count(ctypes.byref(result))):
                row = []
                for c in range(lib.duckdb_column_count(ctypes.byref(result))):
                    at = (ctypes.c_uint64(c), ctypes.c_uint64(r))
                    if lib.duckdb_value_is_null(ctypes.byref(result), *at):
                        row.append(None)
                        continue
                    text = lib.duckdb_value_varchar(ctypes.byref(result), *at)
                    row.append(ctypes.string_at(text).decode())
                    lib.duckdb_free(ctypes.c_void_p(text))
                rows.append(row)
            return rows
        finally:
            lib.duckdb_destroy_result(ctypes.byref(result))


@pytest.fixture(scope="module")
def duck():
    path = library_path()
    if not path.is_file():
        pytest.skip(f"DuckDB's C library is not in the kiln cache ({path}): run make deps")
    return DuckDb(path)


def literal(path):
    return "'" + str(path).replace("'", "''") + "'"


DATE_SQL = {  # the Date column of the Parquet file, from the CSV's DATE
    "date": '"Date"',
    "timestamp_ns": 'CAST("Date" AS TIMESTAMP_NS)',  # pandas' datetime64[ns]
    "text": 'CAST("Date" AS VARCHAR)',
    "yyyymmdd": """CAST(strftime("Date", '%Y%m%d') AS INTEGER)""",
}


def csv_to_parquet(duck, csv_path, parquet_path, date_sql='"Date"', symbol_sql='"Ticker"', symbol_name="Ticker"):
    types = {"Date": "DATE", "Ticker": "VARCHAR", **{name: "DOUBLE" for name in PRICES}}
    columns = ", ".join(f"'{name}': '{kind}'" for name, kind in types.items())
    duck.query(f"COPY (SELECT {date_sql} AS \"Date\", {symbol_sql} AS \"{symbol_name}\", Open, High, Low, Close, Volume,"
               f" Cap FROM read_csv({literal(csv_path)}, header = true, columns = {{{columns}}})) TO "
               f"{literal(parquet_path)} (FORMAT parquet)")


@pytest.fixture(scope="module")
def csv_panel(tmp_path_factory):
    folder = tmp_path_factory.mktemp("csv")
    panel = make_panel()
    write_long_csv(folder / "panel.csv", panel)
    render(folder / "panel.csv", folder / "csv.h5", "--missing-days", "fill")
    return panel, folder


@pytest.mark.parametrize("dates", sorted(DATE_SQL))
def test_parquet_panel_renders_as_the_long_csv(tmp_path, duck, csv_panel, dates):
    panel, folder = csv_panel
    csv_to_parquet(duck, folder / "panel.csv", tmp_path / "panel.parquet", date_sql=DATE_SQL[dates])
    kinds = dict((name, kind) for name, kind, *_ in duck.query(f"DESCRIBE FROM {literal(tmp_path / 'panel.parquet')}"))
    assert (kinds["Ticker"], kinds["Close"]) == ("VARCHAR", "DOUBLE")
    summary = render(tmp_path / "panel.parquet", tmp_path / "out.h5", "--missing-days", "fill")
    assert_same_datasets(folder / "csv.h5", tmp_path / "out.h5")
    check_output(tmp_path / "out.h5", expected(panel, fill=True)[0])
    assert (summary["symbols"], summary["missing_days"], summary["absent_days"]) == (4, 5, 3)


def test_integer_symbols_and_a_name_without_the_extension(tmp_path, duck):
    """PERMNO as BIGINT is found without --symbol-column; the file is Parquet by its PAR1 bytes, not its name."""
    panel = {str(10_000 + i): days for i, (_, days) in enumerate(sorted(make_panel().items()))}
    write_long_csv(tmp_path / "panel.csv", panel)
    csv_to_parquet(duck, tmp_path / "panel.csv", tmp_path / "prices.dat", symbol_sql='CAST("Ticker" AS BIGINT)',
                   symbol_name="PERMNO")
    assert duck.query(f"SELECT typeof(PERMNO) FROM read_parquet({literal(tmp_path / 'prices.dat')}) LIMIT 1") == [["BIGINT"]]
    render(tmp_path / "panel.csv", tmp_path / "csv.h5")
    render(tmp_path / "prices.dat", tmp_path / "pq.h5")
    assert_same_datasets(tmp_path / "csv.h5", tmp_path / "pq.h5")


def test_one_series_parquet(tmp_path, duck):
    with open(tmp_path / "one.csv", "w") as f:
        f.write("Date,Close\n")
        for i in range(40):
            f.write(f"2021-01-{1 + i % 28:02d},{50 + 0.25 * ((i * 7) % 11)}\n" if i < 28 else
                    f"2021-02-{i - 27:02d},{50 + 0.25 * ((i * 7) % 11)}\n")
    duck.query(f"COPY (SELECT * FROM read_csv({literal(tmp_path / 'one.csv')}, header = true, columns = "
               f"{{'Date': 'DATE', 'Close': 'DOUBLE'}})) TO {literal(tmp_path / 'one.parquet')} (FORMAT parquet)")
    args = ("--seq-len", 10, "--width", 20, "--height", 16, "--json", "-q")
    csv_run = run_kiln("render", tmp_path / "one.csv", "-o", tmp_path / "csv.h5", *args)
    pq_run = run_kiln("render", tmp_path / "one.parquet", "-o", tmp_path / "pq.h5", *args)
    assert json.loads(pq_run.stdout.splitlines()[-1])["images"] == json.loads(csv_run.stdout.splitlines()[-1])["images"]
    assert_same_datasets(tmp_path / "csv.h5", tmp_path / "pq.h5")


def fails(source, *extra, env=None, preset=("--preset", "jkx5")):
    result = run_kiln("render", source, "-o", str(source) + ".out.h5", *preset, *extra, check=False, env=env)
    assert result.returncode != 0
    return result.stderr


def test_truncated_corrupt_and_misnamed_files_name_the_file(tmp_path, duck, csv_panel):
    _, folder = csv_panel
    csv_to_parquet(duck, folder / "panel.csv", tmp_path / "good.parquet")
    data = (tmp_path / "good.parquet").read_bytes()
    (tmp_path / "cut.parquet").write_bytes(data[:len(data) // 2])  # begins with PAR1, no footer
    footer = bytearray(data)
    footer[-8:-4] = (len(data) * 4).to_bytes(4, "little")  # a footer longer than the file
    (tmp_path / "footer.parquet").write_bytes(bytes(footer))
    for name in ("cut.parquet", "footer.parquet"):
        error = fails(tmp_path / name)
        assert str(tmp_path / name) in error, error
    (tmp_path / "text.parquet").write_text("Date,Close\n2020-01-02,1\n")
    assert f"{tmp_path / 'text.parquet'}: not a Parquet file (it does not begin with PAR1)" in fails(
        tmp_path / "text.parquet")


def test_more_rows_than_the_memory_limit_allows_is_refused_before_reading(tmp_path, duck):
    """The footer's row count against half the memory the process may use (here RLIMIT_DATA 256 MiB): 10 million
    rows of one price need 153 MiB of series, so kiln refuses them with the figures before it reads a row."""
    import resource
    path = tmp_path / "big.parquet"
    duck.query(f"COPY (SELECT DATE '2000-01-01' + (i % 5000)::INT AS Date, 'S' || (i // 5000)::VARCHAR AS Ticker, "
               f"1.0::DOUBLE AS Close FROM range(10000000) t(i)) TO {literal(path)} (FORMAT parquet)")
    limit = 256 << 20
    result = subprocess.run([KILN, "render", str(path), "-o", str(tmp_path / "big.h5"), "--symbol-column", "Ticker",
                             "-q"], capture_output=True, text=True, timeout=120,
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_DATA, (limit, limit)))
    assert result.returncode != 0
    assert f"{path}: 10000000 rows need 152 MiB, more than half the memory this process may use (128 MiB)" in \
        result.stderr, result.stderr
    assert not (tmp_path / "big.h5").exists()


def test_missing_and_mistyped_columns_are_named(tmp_path, duck, csv_panel):
    _, folder = csv_panel
    csv = literal(folder / "panel.csv")
    duck.query(f"COPY (SELECT Date, Ticker, Open, High, Low, Volume FROM read_csv({csv}, header = true)) TO "
               f"{literal(tmp_path / 'no_close.parquet')} (FORMAT parquet)")
    duck.query(f"COPY (SELECT Date, Ticker, Open, High, Low, CAST(Close AS VARCHAR) AS Close, Volume, Cap FROM "
               f"read_csv({csv}, header = true)) TO {literal(tmp_path / 'text_close.parquet')} (FORMAT parquet)")
    error = fails(tmp_path / "no_close.parquet")
    assert "no_close.parquet: no column 'Close' (columns: Date, Ticker, Open, High, Low, Volume)" in error, error
    error = fails(tmp_path / "text_close.parquet")
    assert "text_close.parquet: column 'Close' holds text values (expected numbers)" in error, error
    error = fails(tmp_path / "no_close.parquet", "--symbol-column", "PERMNO", "--column", "Open", preset=())
    assert "no symbol column 'PERMNO' (columns: Date, Ticker" in error, error


def test_jkx_dat_parquet_labels_equal_the_csv_labels(tmp_path, duck):
    panel = make_panel()
    write_long_csv(tmp_path / "panel.csv", panel)
    summary = render(tmp_path / "panel.csv", tmp_path / "jkx" / "p", "--format", "jkx-dat")
    assert "labels CSV, Feather, Parquet" in summary["output"]
    for year in (2019, 2020):
        with open(tmp_path / "jkx" / f"p_{year}_labels.csv") as f:
            table = list(csv.reader(f))
        path = literal(tmp_path / "jkx" / f"p_{year}_labels.parquet")
        kinds = [(name, kind) for name, kind, *_ in duck.query(f"DESCRIBE FROM {path}")]
        assert kinds == [("Date", "TIMESTAMP_NS"), ("StockID", "VARCHAR"), ("MarketCap", "DOUBLE"),
                         ("Ret_5d", "DOUBLE"), ("Ret_20d", "DOUBLE"), ("Ret_60d", "DOUBLE")]
        rows = duck.query(f"SELECT CAST(CAST(Date AS DATE) AS VARCHAR), StockID, MarketCap, Ret_5d, Ret_20d, Ret_60d "
                          f"FROM {path}")
        as_csv = [[date, symbol, *("" if x is None else f"{float(x):.9g}" for x in values)]
                  for date, symbol, *values in rows]
        assert table[0] == ["Date", "StockID", "MarketCap", "Ret_5d", "Ret_20d", "Ret_60d"]
        assert len(as_csv) == len(table) - 1 > 0
        assert as_csv == table[1:]
        assert any(row[5] == "" for row in table[1:])  # NaN returns are NULL, as the CSV leaves them empty
    assert not list((tmp_path / "jkx").glob("*.tmp"))


def test_without_the_library_kiln_says_how_to_fetch_it(tmp_path):
    """Runs whether or not the library is in the cache: KILN_DUCKDB_LIBRARY points kiln at a missing file."""
    missing = {"KILN_DUCKDB_LIBRARY": str(tmp_path / "absent" / "libduckdb.so")}
    (tmp_path / "p.parquet").write_bytes(b"PAR1" + bytes(64) + b"PAR1")
    error = fails(tmp_path / "p.parquet", env=missing)
    assert "p.parquet: reading Parquet needs DuckDB's C library" in error, error
    assert "@duckdb/node-bindings-linux-x64@" in error and "make deps" in error, error
    write_long_csv(tmp_path / "panel.csv", make_panel())
    result = run_kiln("render", tmp_path / "panel.csv", "-o", tmp_path / "jkx" / "p", "--preset", "jkx5",
                      "--format", "jkx-dat", "--json", "-q", env=missing)
    assert "Parquet skipped" in json.loads(result.stdout.splitlines()[-1])["output"]
    made = sorted(p.name for p in (tmp_path / "jkx").iterdir())
    assert "p_2020_labels.feather" in made and "p_2020_labels.csv" in made
    assert not [name for name in made if "parquet" in name]
