"""Panels from Python: kiln.render_job takes symbol_column, market_cap_column and missing_days under the CLI's names
(and a config file's image: keys) and writes what `kiln render` writes; missing_days="fill" fills an in-memory
series in a copy, leaving the caller's array as it was."""
import os
import subprocess

import numpy as np
import pytest

import kiln

h5py = pytest.importorskip("h5py")


def write_panel(path):
    """Two symbols in long format, rows interleaved; B lacks one date of the panel and has a NaN close."""
    rng = np.random.default_rng(3)
    with open(path, "w") as f:
        f.write("Date,Sym,Open,High,Low,Close,Volume,Size\n")
        for day in range(1, 29):
            for symbol in ("B", "A"):
                if symbol == "B" and day == 9:
                    continue
                close = 40 + day + rng.integers(0, 64) / 64
                text = "nan" if symbol == "B" and day == 15 else repr(close)
                f.write(f"2021-02-{day:02d},{symbol},{close - 0.5},{close + 1},{close - 1},{text},{100 * day},{day}\n")


def read_all(path):
    with h5py.File(path, "r") as f:
        return {name: f[name][()] for name in f.keys()}


def test_render_job_panel_equals_the_cli(tmp_path, kiln_cli):
    write_panel(tmp_path / "p.csv")
    summary = kiln.render_job(str(tmp_path / "p.csv"), output=str(tmp_path / "py.h5"), preset="jkx5",
                              symbol_column="sym", market_cap_column="Size", missing_days="fill", mode="cpu")
    assert (summary["symbols"], summary["missing_days"], summary["absent_days"], summary["filled_days"]) == (2, 2, 1, 2)
    # A: 28 days, B: 28 days on the panel's calendar (one added); 4 days of moving-average history each.
    assert summary["images"] == 2 * (28 - 5 + 1 - 4)
    subprocess.run([kiln_cli, "render", str(tmp_path / "p.csv"), "-o", str(tmp_path / "cli.h5"), "--preset", "jkx5",
                    "--symbol-column", "sym", "--market-cap-column", "Size", "--missing-days", "fill", "--mode", "cpu",
                    "-q"], check=True, env={**os.environ})
    py, cli = read_all(tmp_path / "py.h5"), read_all(tmp_path / "cli.h5")
    assert sorted(py) == sorted(cli)
    for name in py:
        np.testing.assert_array_equal(py[name], cli[name], err_msg=name)
    assert [s.decode() for s in py["symbol"][[0, -1]]] == ["A", "B"]
    # The market cap on each window's last day: A's first window is days 5..9 (4 days of average history before it).
    np.testing.assert_array_equal(py["market_cap"][:3], [9, 10, 11])


def test_missing_days_from_a_config_file(tmp_path):
    write_panel(tmp_path / "p.csv")
    (tmp_path / "c.yaml").write_text("image:\n  missing_days: fill\n  symbol_column: Sym\n")
    summary = kiln.render_job(str(tmp_path / "p.csv"), config=str(tmp_path / "c.yaml"), output=str(tmp_path / "c.h5"),
                              preset="jkx5", mode="cpu")
    assert summary["filled_days"] == 2


def test_fill_on_an_array_leaves_the_callers_array(tmp_path):
    rng = np.random.default_rng(1)
    close = (30 + np.cumsum(rng.normal(0, 1, 50))).astype(np.float32)
    close[20] = np.nan
    before = close.copy()
    skipped = kiln.render_job(close, output=str(tmp_path / "s.npy"), seq_len=10, width=40, height=20, mode="cpu")
    filled = kiln.render_job(close, output=str(tmp_path / "f.npy"), seq_len=10, width=40, height=20, mode="cpu",
                             missing_days="fill")
    assert skipped["images"] == 41 - 10 and skipped["missing_days"] == 1 and skipped["filled_days"] == 0
    assert filled["images"] == 41 and filled["filled_days"] == 1
    np.testing.assert_array_equal(close, before)


@pytest.mark.parametrize("policy", ["skip", "fill"])
def test_chart_dataset_over_a_panel_equals_the_render_job(tmp_path, policy):
    pd = pytest.importorskip("pandas")
    write_panel(tmp_path / "p.csv")
    frame = pd.read_csv(tmp_path / "p.csv")
    dataset = kiln.ChartDataset(frame, preset="jkx5", symbol_column="Sym", market_cap_column="Size",
                                missing_days=policy)
    summary = kiln.render_job(str(tmp_path / "p.csv"), output=str(tmp_path / "job.h5"), preset="jkx5",
                              symbol_column="Sym", market_cap_column="Size", missing_days=policy, mode="cpu")
    job = read_all(tmp_path / "job.h5")
    assert len(dataset) == summary["images"] == len(job["images"])
    assert dataset.missing == {"missing_days": summary["missing_days"], "filled_days": summary["filled_days"]}
    np.testing.assert_array_equal(dataset.get_batch(range(len(dataset))), job["images"])
    for i in (0, len(dataset) // 2, len(dataset) - 1):
        meta = dataset.meta(i)
        assert meta["symbol"] == job["symbol"][i].decode()
        for name in ("start_date", "end_date", "ret_5d", "ret_20d", "ret_60d", "market_cap"):
            np.testing.assert_array_equal(meta[name], job[name][i], err_msg=name)


def test_render_job_reads_the_panel_from_hdf5(tmp_path):
    """The CSV's panel as an HDF5 group of columns (variable-length strings, dates as text) renders the same."""
    write_panel(tmp_path / "p.csv")
    rows = [line.split(",") for line in (tmp_path / "p.csv").read_text().splitlines()]
    header, body = rows[0], rows[1:]
    with h5py.File(tmp_path / "p.h5", "w") as f:
        g = f.create_group("prices")
        for i, name in enumerate(header):
            column = [r[i] for r in body]
            text = name in ("Date", "Sym")
            g[name] = np.array(column, dtype=h5py.string_dtype()) if text else np.array(column, dtype=np.float64)
    options = dict(preset="jkx5", symbol_column="sym", market_cap_column="Size", missing_days="fill", mode="cpu")
    from_csv = kiln.render_job(str(tmp_path / "p.csv"), output=str(tmp_path / "csv.h5"), **options)
    from_h5 = kiln.render_job(str(tmp_path / "p.h5") + ":/prices", output=str(tmp_path / "h5.h5"), **options)
    assert from_h5["images"] == from_csv["images"] > 0 and from_h5["symbols"] == 2
    csv, h5 = read_all(tmp_path / "csv.h5"), read_all(tmp_path / "h5.h5")
    assert sorted(csv) == sorted(h5)
    for name in csv:
        np.testing.assert_array_equal(csv[name], h5[name], err_msg=name)


def csv_to_parquet(csv_path, parquet_path):
    """The CSV as Parquet, written by DuckDB's C library (the one kiln reads Parquet with) through ctypes."""
    import ctypes
    cache = os.environ.get("KILN_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "kiln")
    library = os.environ.get("KILN_DUCKDB_LIBRARY") or os.path.join(cache, "duckdb", "lib", "libduckdb.so")
    if not os.path.isfile(library):
        pytest.skip(f"DuckDB's library is not at {library} (make deps fetches it)")
    duck = ctypes.CDLL(library)
    database, connection = ctypes.c_void_p(), ctypes.c_void_p()
    assert duck.duckdb_open(None, ctypes.byref(database)) == 0
    assert duck.duckdb_connect(database, ctypes.byref(connection)) == 0
    result = (ctypes.c_byte * 64)()  # duckdb_result: 48 bytes in DuckDB 1.x
    sql = f"COPY (SELECT * FROM read_csv('{csv_path}', header = true)) TO '{parquet_path}' (FORMAT parquet)"
    assert duck.duckdb_query(connection, sql.encode(), ctypes.byref(result)) == 0
    duck.duckdb_destroy_result(ctypes.byref(result))
    duck.duckdb_disconnect(ctypes.byref(connection))
    duck.duckdb_close(ctypes.byref(database))


def test_render_job_reads_the_panel_from_parquet(tmp_path):
    write_panel(tmp_path / "p.csv")
    csv_to_parquet(tmp_path / "p.csv", tmp_path / "p.parquet")
    options = dict(preset="jkx5", symbol_column="sym", market_cap_column="Size", missing_days="fill", mode="cpu")
    from_csv = kiln.render_job(str(tmp_path / "p.csv"), output=str(tmp_path / "csv.h5"), **options)
    from_parquet = kiln.render_job(str(tmp_path / "p.parquet"), output=str(tmp_path / "pq.h5"), **options)
    assert from_parquet["images"] == from_csv["images"] > 0 and from_parquet["symbols"] == 2
    csv, parquet = read_all(tmp_path / "csv.h5"), read_all(tmp_path / "pq.h5")
    assert sorted(csv) == sorted(parquet)
    for name in csv:
        np.testing.assert_array_equal(csv[name], parquet[name], err_msg=name)
