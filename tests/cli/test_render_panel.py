"""kiln render on a panel of many symbols (a long-format CSV with a symbol column, or a folder of one CSV per symbol):
windows per symbol, never across two; each image's symbol, dates, forward returns and market cap stored; missing
days skipped or filled and counted; resume, shards + kiln merge and jkx-dat as for one series.

The expectations are computed here from the rows written, never by kiln: the panel's calendar is the union of the
symbols' dates, a symbol spans its first to its last date, a day is missing when absent or when a value is NaN, the
jkx5 preset draws OHLC + volume + a 5-day moving average of the closes (finite only over 5 present closes of the same
symbol), and returns are the close k rows later on that calendar over the window's last close, minus 1.
"""
import csv
import datetime
import json
import os
import shutil

import numpy as np
import pytest

from conftest import assert_same_output, h5py, kill_once_made, read_dataset, run_kiln

SEQ = 5  # --preset jkx5: 5 days, a 5-day moving average
META = ("symbol", "start_date", "end_date", "ret_5d", "ret_20d", "ret_60d", "market_cap")


def make_panel(days=70, seed=7, start=datetime.date(2019, 12, 1)):
    """{symbol: {date: (open, high, low, close, volume, cap)}}: prices on a 1/64 grid (exact in float32 and in the
    CSV), symbols listed and delisted at different days, absent days and NaN values."""
    rng = np.random.default_rng(seed)
    calendar = [start + datetime.timedelta(d) for d in range(days)]
    spans = {"MSFT": (0, days), "AAPL": (6, days - 3), "ZZ": (0, 45), "IBM": (10, days)}
    panel = {}
    for symbol, (first, last) in spans.items():
        close = 50 + np.cumsum(np.round(rng.normal(0, 1, days) * 64) / 64)
        rows = {}
        for i in range(first, last):
            op = close[i - 1] if i else close[i]
            high = max(op, close[i]) + 0.25
            low = min(op, close[i]) - 0.25
            rows[calendar[i]] = [op, high, low, close[i], float(1000 + 7 * i), float(10_000 + i)]
        panel[symbol] = rows
    # Absent days (a date of the panel the symbol lacks) and NaN values.
    for symbol, offset in (("AAPL", 20), ("AAPL", 21), ("IBM", 40)):
        del panel[symbol][calendar[offset]]
    panel["ZZ"][calendar[15]][3] = float("nan")  # a NaN close
    panel["MSFT"][calendar[30]][4] = float("nan")  # a NaN volume
    return panel


def write_long_csv(path, panel, order_seed=3):
    rows = [(s, d, *v) for s, days in panel.items() for d, v in days.items()]
    np.random.default_rng(order_seed).shuffle(rows)  # any row order
    with open(path, "w") as f:
        f.write("Date,Ticker,Open,High,Low,Close,Volume,Cap\n")
        for s, d, *v in rows:
            f.write(f"{d.isoformat()},{s}," + ",".join("" if np.isnan(x) else repr(x) for x in v) + "\n")


def write_folder(folder, panel):
    folder.mkdir()
    for symbol, days in panel.items():
        with open(folder / f"{symbol}.csv", "w") as f:
            f.write("Date,Open,High,Low,Close,Volume,Cap\n")
            for d, v in sorted(days.items()):
                f.write(f"{d:%Y%m%d}," + ",".join("" if np.isnan(x) else repr(x) for x in v) + "\n")


def expected(panel, fill=False):
    """What kiln should render: per symbol (sorted), its rows on the calendar, then its windows and their facts."""
    calendar = sorted({d for days in panel.values() for d in days})
    windows, missing, absent, filled = [], 0, 0, 0
    for symbol in sorted(panel):
        days = panel[symbol]
        span = calendar[calendar.index(min(days)):calendar.index(max(days)) + 1]
        rows = np.array([days.get(d, [np.nan] * 6) for d in span], dtype=np.float64)
        rows[:, :5] = rows[:, :5].astype(np.float32)
        absent += sum(d not in days for d in span)
        last_close = np.nan
        for r in range(len(rows)):
            if not np.isfinite(rows[r, :5]).all():
                missing += 1
                if fill and (np.isfinite(rows[r, :4]).all() or np.isfinite(last_close)):
                    if not np.isfinite(rows[r, :4]).all():
                        rows[r, :4] = last_close
                    rows[r, 4] = 0
                    filled += 1
            if np.isfinite(rows[r, :4]).all():
                last_close = rows[r, 3]
        close = rows[:, 3]
        for s in range(SEQ - 1, len(rows) - SEQ + 1):
            e = s + SEQ - 1
            if not (np.isfinite(close[s - SEQ + 1:e + 1]).all() and np.isfinite(rows[s:e + 1, :5]).all()):
                continue
            ret = [close[e + k] / close[e] - 1 if e + k < len(rows) else np.nan for k in (5, 20, 60)]
            windows.append(dict(symbol=symbol, start_date=int(f"{span[s]:%Y%m%d}"), end_date=int(f"{span[e]:%Y%m%d}"),
                                ret_5d=ret[0], ret_20d=ret[1], ret_60d=ret[2], market_cap=rows[e, 5],
                                ohlc=rows[s:e + 1, :4].astype(np.float32)))
    return windows, dict(missing_days=missing, absent_days=absent, filled_days=filled, symbols=len(panel))


def render(source, out, *extra):
    result = run_kiln("render", source, "-o", out, "--preset", "jkx5", "--market-cap-column", "Cap", "--json", "-q",
                      *extra)
    return json.loads(result.stdout.strip().splitlines()[-1])


def check_output(path, windows):
    data, _ = read_dataset(path)
    assert len(data["images"]) == len(windows)
    assert [s.decode() for s in data["symbol"]] == [w["symbol"] for w in windows]
    for name in ("start_date", "end_date"):
        np.testing.assert_array_equal(data[name], [w[name] for w in windows], err_msg=name)
    for name in ("ret_5d", "ret_20d", "ret_60d", "market_cap"):
        np.testing.assert_allclose(data[name], [w[name] for w in windows], rtol=1e-12, equal_nan=True, err_msg=name)
    # Each image's window is its own symbol's rows (never a neighbour's).
    np.testing.assert_array_equal(data["sequences"], np.stack([w["ohlc"] for w in windows]))


@pytest.mark.parametrize("policy", ["skip", "fill"])
def test_long_csv_panel_windows_metadata_and_missing_days(tmp_path, policy):
    panel = make_panel()
    write_long_csv(tmp_path / "panel.csv", panel)
    out = tmp_path / "panel.h5"
    summary = render(tmp_path / "panel.csv", out, "--missing-days", policy)
    windows, counts = expected(panel, fill=policy == "fill")
    check_output(out, windows)
    assert summary["images"] == len(windows)
    for key, value in counts.items():
        assert summary[key] == value, key
    assert counts["missing_days"] == 5 and counts["absent_days"] == 3
    assert counts["filled_days"] == (5 if policy == "fill" else 0)
    text = run_kiln("render", tmp_path / "panel.csv", "-o", tmp_path / "t.h5", "--preset", "jkx5",
                    "--missing-days", policy, "-q").stdout
    assert f"Panel: 4 symbols; missing days: 5 (3 absent from a symbol's dates), filled: {counts['filled_days']}" in text


def test_folder_of_files_equals_the_long_csv(tmp_path):
    panel = make_panel()
    write_long_csv(tmp_path / "panel.csv", panel)
    write_folder(tmp_path / "symbols", panel)
    render(tmp_path / "panel.csv", tmp_path / "long.h5")
    render(tmp_path / "symbols", tmp_path / "folder.h5")
    long_data, _ = read_dataset(tmp_path / "long.h5")
    folder_data, _ = read_dataset(tmp_path / "folder.h5")
    assert sorted(long_data) == sorted(folder_data)
    for name in long_data:
        np.testing.assert_array_equal(long_data[name], folder_data[name], err_msg=name)
    check_output(tmp_path / "folder.h5", expected(panel)[0])


def test_symbol_column_named_and_errors(tmp_path):
    panel = make_panel()
    write_long_csv(tmp_path / "panel.csv", panel)
    renamed = (tmp_path / "panel.csv").read_text().replace("Ticker", "permno_id", 1)
    (tmp_path / "named.csv").write_text(renamed)
    render(tmp_path / "named.csv", tmp_path / "named.h5", "--symbol-column", "PERMNO_ID")
    check_output(tmp_path / "named.h5", expected(panel)[0])
    missing = run_kiln("render", tmp_path / "named.csv", "-o", tmp_path / "x.h5", "--preset", "jkx5",
                       "--symbol-column", "Symbol", check=False)
    assert missing.returncode != 0 and "no symbol column 'Symbol'" in missing.stderr
    lines = (tmp_path / "panel.csv").read_text().splitlines()
    (tmp_path / "twice.csv").write_text("\n".join(lines + [lines[1]]) + "\n")
    twice = run_kiln("render", tmp_path / "twice.csv", "-o", tmp_path / "y.h5", "--preset", "jkx5", check=False)
    assert twice.returncode != 0 and "twice" in twice.stderr


@pytest.fixture(scope="module")
def big_panel(tmp_path_factory):
    """More than one 4096-image part, so a run can be killed between parts."""
    folder = tmp_path_factory.mktemp("big")
    panel = make_panel(days=3000, seed=11)
    write_long_csv(folder / "panel.csv", panel)
    reference = folder / "reference.h5"
    render(folder / "panel.csv", reference)
    return folder / "panel.csv", reference, panel


def test_killed_panel_run_resumes_to_the_same_file(tmp_path, big_panel):
    source, reference, panel = big_panel
    out = tmp_path / "run.h5"
    args = ["render", source, "-o", out, "--preset", "jkx5", "--market-cap-column", "Cap", "-q", "--threads", "1"]
    kill_once_made(args, tmp_path / "run.h5.parts" / "part_00000.h5")
    summary = render(source, out, "--resume", "--threads", "1")
    assert summary["resumed_from"] >= 4096
    assert_same_output(reference, out)
    check_output(out, expected(panel)[0])


def test_resume_of_another_panel_is_refused(tmp_path, big_panel):
    source, _, panel = big_panel
    shutil.copy(source, tmp_path / "panel.csv")
    out = tmp_path / "run.h5"
    args = ["render", tmp_path / "panel.csv", "-o", out, "--preset", "jkx5", "--market-cap-column", "Cap", "-q", "--threads", "1"]
    kill_once_made(args, tmp_path / "run.h5.parts" / "part_00000.h5")
    panel = {symbol: days for symbol, days in panel.items() if symbol != "IBM"}
    write_long_csv(tmp_path / "fewer.csv", panel)
    os.replace(tmp_path / "fewer.csv", tmp_path / "panel.csv")
    changed = run_kiln("render", tmp_path / "panel.csv", "-o", out, "--preset", "jkx5", "--market-cap-column", "Cap",
                       "--resume", check=False)
    assert changed.returncode != 0 and "different settings" in changed.stderr


@pytest.fixture(scope="module")
def panel_pieces(tmp_path_factory):
    """The whole job and its three pieces, rendered once for both kinds of merge."""
    folder = tmp_path_factory.mktemp("pieces")
    panel = make_panel()
    write_long_csv(folder / "panel.csv", panel)
    render(folder / "panel.csv", folder / "whole" / "p.h5")
    for i in range(3):
        render(folder / "panel.csv", folder / "pieces" / "p.h5", "--shard", f"{i}/3")
    return folder, panel


@pytest.mark.parametrize("copy", [False, True], ids=["vds", "copy"])
def test_pieces_of_a_panel_merge_into_the_whole_run(tmp_path, panel_pieces, copy):
    folder, panel = panel_pieces
    merged = tmp_path / "merged.h5"
    run_kiln("merge", folder / "pieces", "-o", merged, *(["--copy"] if copy else []))
    whole_data, _ = read_dataset(folder / "whole" / "p.h5")
    merged_data, _ = read_dataset(merged)
    assert sorted(whole_data) == sorted(merged_data)
    for name in whole_data:
        np.testing.assert_array_equal(whole_data[name], merged_data[name], err_msg=name)
    with h5py.File(merged) as f:
        assert f["images"].is_virtual is (not copy)
    check_output(merged, expected(panel)[0])


def test_images_per_file_output_holds_the_table(tmp_path):
    panel = make_panel()
    write_long_csv(tmp_path / "panel.csv", panel)
    render(tmp_path / "panel.csv", tmp_path / "s.h5", "--images-per-file", 50)
    check_output(tmp_path / "s.h5", expected(panel)[0])


def test_jkx_dat_label_tables_name_each_symbol_by_year(tmp_path):
    panel = make_panel()
    write_long_csv(tmp_path / "panel.csv", panel)
    render(tmp_path / "panel.csv", tmp_path / "jkx" / "p", "--format", "jkx-dat")
    windows = expected(panel)[0]
    images = {}
    for year in (2019, 2020):
        in_year = [w for w in windows if w["end_date"] // 10000 == year]  # symbol, then date order within a year
        with open(tmp_path / "jkx" / f"p_{year}_labels.csv") as f:
            table = list(csv.DictReader(f))
        assert [r["StockID"] for r in table] == [w["symbol"] for w in in_year]
        assert [r["Date"].replace("-", "") for r in table] == [str(w["end_date"]) for w in in_year]
        for key, name in (("Ret_5d", "ret_5d"), ("Ret_20d", "ret_20d"), ("MarketCap", "market_cap")):
            got = np.array([float(r[key]) if r[key] else np.nan for r in table])
            np.testing.assert_allclose(got, [w[name] for w in in_year], rtol=1e-8, equal_nan=True, err_msg=key)
        raw = np.fromfile(tmp_path / "jkx" / f"p_{year}_images.dat", dtype=np.uint8).reshape(-1, 32, 15)
        assert len(raw) == len(in_year)
        images[year] = raw
    # The same images as the HDF5 output, regrouped by year.
    render(tmp_path / "panel.csv", tmp_path / "p.h5")
    data, _ = read_dataset(tmp_path / "p.h5")
    by_year = [data["images"][[i for i, w in enumerate(windows) if w["end_date"] // 10000 == y]] for y in (2019, 2020)]
    np.testing.assert_array_equal(np.concatenate(by_year), np.concatenate([images[2019], images[2020]]))
