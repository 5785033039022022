"""kiln render on a panel read from HDF5 (issue 55): the long-format table as a compound dataset (a numpy structured
array written by h5py; pandas' to_hdf(format="table") writes one as /key/table) or as a group of 1-D datasets, one per
column. The same panel written as a CSV and as HDF5 gives the same output, byte for byte; bad tables give the CSV's
errors. And the per-image table of a panel's output is covered by its own checksum (table_checksum), which
`kiln info --verify` (and resume, merge) checks: a damaged table is reported by name.
"""
import shutil

import numpy as np
import pytest
from numpy.lib.recfunctions import repack_fields

from conftest import h5py, read_dataset, run_kiln
from test_render_panel import check_output, expected, make_panel, render, write_long_csv

PRICES = ("Open", "High", "Low", "Close", "Volume", "Cap")


def long_rows(panel, order_seed=3):
    """The panel's rows in the CSV writer's (shuffled) order: (symbol, date, open, ..., cap)."""
    rows = [(s, d, *v) for s, days in panel.items() for d, v in days.items()]
    np.random.default_rng(order_seed).shuffle(rows)
    return rows


def write_compound(path, panel, symbol_type="S8", symbol_of=str):
    rows = long_rows(panel)
    dtype = [("Ticker", symbol_type), ("Date", "<i4")] + [(name, "<f8") for name in PRICES]
    table = np.array([(symbol_of(s), int(f"{d:%Y%m%d}"), *v) for s, d, *v in rows], dtype=dtype)
    with h5py.File(path, "w") as f:
        f.create_dataset("prices", data=table)


def write_group(path, panel):
    """Variable-length string symbols and dates as text, float32 prices."""
    rows = long_rows(panel)
    with h5py.File(path, "w") as f:
        g = f.create_group("prices")
        g["Ticker"] = np.array([s for s, *_ in rows], dtype=h5py.string_dtype())
        g["Date"] = np.array([d.isoformat() for _, d, *_ in rows], dtype=h5py.string_dtype())
        for i, name in enumerate(PRICES):
            g[name] = np.array([r[2 + i] for r in rows], dtype=np.float32 if i < 4 else np.float64)


def write_pandas(path, panel):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("tables")  # pandas writes HDF5 through PyTables
    rows = long_rows(panel)
    frame = pd.DataFrame(rows, columns=["Ticker", "Date", *PRICES])
    frame["Date"] = pd.to_datetime(frame["Date"])  # datetime64[ns]: stored as int64 nanoseconds
    frame.to_hdf(path, key="prices", format="table", data_columns=True, mode="w")


def assert_same_datasets(a, b):
    data_a, _ = read_dataset(a)
    data_b, _ = read_dataset(b)
    assert sorted(data_a) == sorted(data_b)
    for name in data_a:
        np.testing.assert_array_equal(data_a[name], data_b[name], err_msg=name)


@pytest.fixture(scope="module")
def csv_panel(tmp_path_factory):
    folder = tmp_path_factory.mktemp("csv")
    panel = make_panel()
    write_long_csv(folder / "panel.csv", panel)
    render(folder / "panel.csv", folder / "csv.h5", "--missing-days", "fill")
    return panel, folder / "csv.h5"


@pytest.mark.parametrize("writer", [write_compound, write_group, write_pandas], ids=["compound", "group", "pandas"])
def test_hdf5_table_renders_as_the_long_csv(tmp_path, csv_panel, writer):
    panel, reference = csv_panel
    writer(tmp_path / "panel.h5", panel)
    summary = render(f"{tmp_path / 'panel.h5'}:/prices", tmp_path / "out.h5", "--missing-days", "fill")
    assert_same_datasets(reference, tmp_path / "out.h5")
    check_output(tmp_path / "out.h5", expected(panel, fill=True)[0])
    assert (summary["symbols"], summary["missing_days"], summary["absent_days"]) == (4, 5, 3)


def test_integer_symbols_permno(tmp_path):
    panel = {str(10_000 + i): days for i, (_, days) in enumerate(sorted(make_panel().items()))}
    write_long_csv(tmp_path / "panel.csv", panel)
    write_compound(tmp_path / "panel.h5", panel, symbol_type="<i8", symbol_of=int)
    with h5py.File(tmp_path / "panel.h5", "a") as f:  # renamed PERMNO: found without --symbol-column
        table = f["prices"][()]
        table.dtype.names = ("PERMNO", *table.dtype.names[1:])
        del f["prices"]
        f["prices"] = table
    render(tmp_path / "panel.csv", tmp_path / "csv.h5")
    render(f"{tmp_path / 'panel.h5'}:/prices", tmp_path / "h5.h5")
    assert_same_datasets(tmp_path / "csv.h5", tmp_path / "h5.h5")
    assert [s.decode() for s in read_dataset(tmp_path / "h5.h5")[0]["symbol"][[0, -1]]] == ["10000", "10003"]


def fails(source, *extra):
    result = run_kiln("render", source, "-o", source.split(":")[0] + ".out.h5", *extra, check=False)
    assert result.returncode != 0
    return result.stderr


def test_bad_tables_are_refused_with_the_csvs_errors(tmp_path):
    panel = make_panel()
    path = tmp_path / "bad.h5"
    rows = long_rows(panel)
    dtype = [("Ticker", "S8"), ("Date", "<i4")] + [(name, "<f8") for name in PRICES]
    table = np.array([(s, int(f"{d:%Y%m%d}"), *v) for s, d, *v in rows], dtype=dtype)
    with h5py.File(path, "w") as f:
        f["no_close"] = repack_fields(table[["Ticker", "Date", "Open", "High", "Low", "Volume"]])
        f["twice"] = np.concatenate([table, table[:1]])
        g = f.create_group("uneven")
        g["Ticker"] = np.array([b"A", b"B"])
        g["Date"] = np.array([20200102, 20200102])
        g["Close"] = np.array([1.0, 2.0, 3.0])
        g = f.create_group("float_dates")
        g["Ticker"], g["Date"], g["Close"] = np.array([b"A"]), np.array([20200102.0]), np.array([1.0])
        f["array"] = np.arange(10.0)
    source = str(path)
    assert "no column 'Close' (columns: Ticker, Date, Open, High, Low, Volume)" in fails(source + ":/no_close")
    twice = fails(source + ":/twice")
    assert "symbol " in twice and " twice" in twice
    assert "no symbol column 'PERMNO' (columns: Ticker, Date" in fails(source + ":/twice", "--symbol-column", "PERMNO")
    assert "column 'Date' has 2 rows, 'Close' 3" in fails(source + ":/uneven")
    assert "expected yyyymmdd integers or dates as text" in fails(source + ":/float_dates")
    assert "a panel is a table with a symbol column" in fails(source + ":/array", "--symbol-column", "Ticker")
    assert "no dataset or group '/nothing' (datasets: /array" in fails(source + ":/nothing")


@pytest.fixture(scope="module")
def panel_output(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sum")
    write_long_csv(folder / "panel.csv", make_panel())
    render(folder / "panel.csv", folder / "one.h5")
    render(folder / "panel.csv", folder / "vds.h5", "--images-per-file", 50)
    return folder


def verify(path):
    return run_kiln("info", path, "--verify", check=False)


@pytest.mark.parametrize("output", ["one.h5", "vds.h5"])
def test_a_changed_table_value_fails_verification(tmp_path, panel_output, output):
    for path in panel_output.iterdir():  # a VDS output with its files
        shutil.copy(path, tmp_path / path.name)
    assert verify(tmp_path / output).returncode == 0
    with h5py.File(tmp_path / output, "a") as f:
        assert f.attrs["table_checksum"].startswith("crc32 table=")
        f["ret_5d"][3] = f["ret_5d"][3] + 0.25
    result = verify(tmp_path / output)
    assert result.returncode != 0 and "is damaged: table checksum" in result.stderr


def test_a_flipped_byte_of_the_table_fails_verification(tmp_path, panel_output):
    shutil.copy(panel_output / "one.h5", tmp_path / "one.h5")
    with h5py.File(tmp_path / "one.h5", "r") as f:
        chunk = f["ret_20d"].id.get_chunk_info(0)
    with open(tmp_path / "one.h5", "r+b") as f:
        f.seek(chunk.byte_offset + chunk.size // 2)
        byte = f.read(1)[0]
        f.seek(-1, 1)
        f.write(bytes([byte ^ 0x10]))
    result = verify(tmp_path / "one.h5")
    assert result.returncode != 0 and "one.h5 is damaged: table" in result.stderr, result.stderr


def test_a_file_without_table_checksum_still_verifies(tmp_path, panel_output):
    """Written before kiln kept the table's checksum: the content checksum alone is checked, as before."""
    shutil.copy(panel_output / "one.h5", tmp_path / "one.h5")
    with h5py.File(tmp_path / "one.h5", "a") as f:
        del f.attrs["table_checksum"]
        f["ret_5d"][3] = 99.0  # not covered without it
    result = verify(tmp_path / "one.h5")
    assert result.returncode == 0 and "verified 1 of 1 file" in result.stdout
