"""kiln render --preset jkx5/jkx20/jkx60: every pixel against a reference drawn here from Jiang, Kelly and Xiu's rules.

The reference never calls kiln: it reads the same OHLCV rows, computes the moving average over the whole series
(a window's first days average the days before it), and draws OHLC bars 3 px a day (open tick in the left column,
high-low bar in the centre column, close tick in the right column), the moving average as a 1-px aliased line
through the bars' centre columns, and the volume bars in the bottom fifth below a 2-row gap, white (255) on black.
Arithmetic that decides a row is float32, as the rules state (numpy float32 operations are IEEE single).
"""
import json
import math
import os
from fractions import Fraction

import numpy as np
import pytest

from conftest import run_kiln

SIZES = {"jkx5": (5, 32), "jkx20": (20, 64), "jkx60": (60, 96)}
OPENCL = {"KILN_OPENCL_DEVICE_TYPE": "all"}
F = np.float32


def ohlcv_rows(n, seed):
    """Prices on a 1/64 grid (exact in float32 and in the CSV text), integer volumes: a random walk with a jump, a
    flat stretch and days without volume."""
    rng = np.random.default_rng(seed)
    close = 100 + np.cumsum(np.round(rng.normal(0, 1.5, n) * 64) / 64)
    close[n // 2:] += 25  # a jump: steep moving-average segments
    close[n // 3:n // 3 + 6] = close[n // 3]  # flat days
    rows = []
    for i in range(n):
        op = close[i - 1] if i else close[i]
        wick_hi, wick_lo = np.round(np.abs(rng.normal(0, 1, 2)) * 64) / 64
        high, low = max(op, close[i]) + wick_hi, min(op, close[i]) - wick_lo
        volume = 0 if i % 13 == 5 else int(rng.integers(1_000, 2_000_000))
        rows.append((f"2020-01-{i % 28 + 1:02d}", op, high, low, close[i], volume))
    return rows


def write_csv(path, rows):
    with open(path, "w") as f:
        f.write("Date,Open,High,Low,Close,Volume\n")
        for r in rows:
            f.write(",".join(str(v) for v in r) + "\n")


def round_half_up(q):
    return math.floor(q + Fraction(1, 2))


def aliased_segment(x0, y0, x1, y1):
    """The pixels of a 1-px line: one per column when |dy| <= dx, else one per row; halves round up."""
    dx, dy = x1 - x0, y1 - y0
    if abs(dy) <= dx:
        return [(x, y0 + (round_half_up(Fraction(dy * (x - x0), dx)) if dx else 0)) for x in range(x0, x1 + 1)]
    sign = 1 if dy > 0 else -1
    return [(x0 + round_half_up(Fraction(dx * t, abs(dy))), y0 + sign * t) for t in range(abs(dy) + 1)]


def reference_image(bars, volume, ma, height, days):
    """bars (days, 4), volume (days,), ma (days,): float32 values of one window."""
    width = 3 * days
    volume_rows = height // 5
    price_rows = height - volume_rows - 2
    image = np.zeros((height, width), np.uint8)
    lo = min(bars[:, 2].min(), ma.min())
    hi = max(bars[:, 1].max(), ma.max())

    def row(v):  # nearest row, the window's max high at the top row, its min low at the price area's bottom row
        y = (F(1) - (F(v) - lo) / (hi - lo)) * F(price_rows - 1) if hi > lo else F(0.5) * F(price_rows - 1)
        return min(max(int(np.floor(y + F(0.5))), 0), price_rows - 1)

    for i in range(days):
        o, h, l, c = (row(v) for v in bars[i])
        image[o, 3 * i] = 255
        image[h:l + 1, 3 * i + 1] = 255
        image[c, 3 * i + 2] = 255
    for i in range(days - 1):
        for x, y in aliased_segment(3 * i + 1, row(ma[i]), 3 * i + 4, row(ma[i + 1])):
            image[y, x] = 255
    largest = volume.max()
    for i in range(days):
        filled = 0 if largest <= 0 or volume[i] <= 0 else int(np.floor(volume[i] * (F(volume_rows) / largest) + F(0.5)))
        if filled:
            image[height - min(filled, volume_rows):, 3 * i + 1] = 255
    return image


def expected_images(rows, preset):
    days, height = SIZES[preset]
    ohlc = np.array([r[1:5] for r in rows], dtype=np.float32)
    volume = np.array([r[5] for r in rows], dtype=np.float32)
    close = ohlc[:, 3].astype(np.float64)
    ma = np.full(len(rows), np.nan, np.float32)
    for t in range(days - 1, len(rows)):
        ma[t] = np.float32(close[t - days + 1:t + 1].sum() / days)
    starts = [s for s in range(len(rows) - days + 1) if not np.isnan(ma[s:s + days]).any()]
    return starts, [reference_image(ohlc[s:s + days], volume[s:s + days], ma[s:s + days], height, days) for s in starts]


@pytest.mark.parametrize("preset", ["jkx5", "jkx20", "jkx60"])
def test_every_pixel_matches_the_papers_rules(tmp_path, preset):
    rows = ohlcv_rows(150, seed=len(preset))
    write_csv(tmp_path / "p.csv", rows)
    out = tmp_path / "out.npy"
    run_kiln("render", tmp_path / "p.csv", "-o", out, "--preset", preset, "--mode", "cpu", "-q")
    images = np.load(out)
    starts, expected = expected_images(rows, preset)
    days, height = SIZES[preset]
    assert images.shape == (len(starts), height, 3 * days) and images.dtype == np.uint8
    assert len(starts) == 150 - days + 1 - (days - 1)  # windows without the MA's history are skipped
    for i, (image, want) in enumerate(zip(images, expected)):
        assert np.array_equal(image, want), f"window {i} (start {starts[i]}): {np.argwhere(image != want)[:10]}"
    # Only black and white; the 2-row gap is black; every image has volume bars and ink in its price area.
    volume_rows = height // 5
    assert set(np.unique(images)) == {0, 255}
    assert not images[:, height - volume_rows - 2:height - volume_rows].any()
    assert images[:, height - 1].any(axis=1).all() and images[:, 0].any(axis=1).all()


def test_preset_on_opencl_matches_the_cpu(tmp_path):
    backends = json.loads(run_kiln("devices", "--json", env=OPENCL).stdout)["backends"]
    if not any(b["name"] == "opencl" and b["available"] for b in backends):
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    rows = ohlcv_rows(120, seed=7)
    write_csv(tmp_path / "p.csv", rows)
    run_kiln("render", tmp_path / "p.csv", "-o", tmp_path / "cpu.npy", "--preset", "jkx20", "--mode", "cpu", "-q")
    result = run_kiln("render", tmp_path / "p.csv", "-o", tmp_path / "gpu.npy", "--preset", "jkx20", "--mode", "gpu",
                      env=OPENCL)
    assert "opencl" in result.stderr
    assert np.array_equal(np.load(tmp_path / "cpu.npy"), np.load(tmp_path / "gpu.npy"))


def test_volume_and_moving_averages_on_any_style(tmp_path):
    """--volume and --moving-average outside the preset: a panel of the requested rows, windows whose volume is NaN
    skipped like NaN prices, and the same images from a CSV's Volume column and an (N, 5) NPY."""
    rows = ohlcv_rows(80, seed=3)
    rows[40] = rows[40][:5] + ("nan",)
    write_csv(tmp_path / "p.csv", rows)
    args = ["--seq-len", 20, "--width", 80, "--height", 60, "--volume", "--volume-height", 15, "--moving-average",
            "5,10", "--style", "candlestick", "--mode", "cpu", "-q"]
    run_kiln("render", tmp_path / "p.csv", "-o", tmp_path / "csv.npy", *args)
    images = np.load(tmp_path / "csv.npy")
    # Starts 9..60 have the 10-day average's history; the 20 holding row 40 (starts 21..40) are skipped.
    assert images.shape == (60 - 9 + 1 - 20, 60, 80)
    assert images[:, 60 - 15:].min() == 0 and images[:, 60 - 15 - 2:60 - 15].min() == 255  # bars below, a blank gap
    table = np.array([[float(v) for v in r[1:]] for r in rows], dtype=np.float32)
    np.save(tmp_path / "p.npy", table)
    run_kiln("render", tmp_path / "p.npy", "-o", tmp_path / "npy.npy", *args)
    assert np.array_equal(np.load(tmp_path / "npy.npy"), images)
    import h5py
    with h5py.File(tmp_path / "p.h5", "w") as f:
        f["prices/ohlcv"] = table.astype(np.float64)
    run_kiln("render", f"{tmp_path / 'p.h5'}:/prices/ohlcv", "-o", tmp_path / "h5.npy", *args)
    assert np.array_equal(np.load(tmp_path / "h5.npy"), images)
    np.save(tmp_path / "three.npy", table[:, 2:])
    wrong = run_kiln("render", tmp_path / "three.npy", "-o", tmp_path / "x.npy", "--seq-len", 20, "--volume",
                     check=False)
    assert wrong.returncode != 0 and "(N, 2) or (N, 5)" in wrong.stderr  # the prices (1 or 4), then the volume


def dated_rows(n, seed, first="2019-10-01"):
    days = np.datetime64(first) + np.arange(n * 2)
    weekdays = [d for d in days if d.astype("datetime64[D]").item().weekday() < 5][:n]
    return [(str(d),) + r[1:] for d, r in zip(weekdays, ohlcv_rows(n, seed))]


LABELS = ["Date", "StockID", "MarketCap", "Ret_5d", "Ret_20d", "Ret_60d"]


def feather_table_equal_to_csv(prefix, year):
    """The year's Feather labels, read by the feather package (Feather V1, as pandas.read_feather reads them):
    the CSV's rows and columns, Date as datetime64[ns], StockID as text, NaN where the CSV is empty."""
    import feather
    import pandas as pd
    table = feather.read_dataframe(f"{prefix}_{year}_labels.feather")
    text = pd.read_csv(f"{prefix}_{year}_labels.csv", dtype={"StockID": str}, parse_dates=["Date"],
                       keep_default_na=False, na_values=[""])
    assert list(table.columns) == list(text.columns) == LABELS
    assert len(table) == len(text) > 0
    assert str(table["Date"].dtype) == "datetime64[ns]" and table["StockID"].dtype == object
    assert all(table[c].dtype == np.float64 for c in LABELS[2:])
    assert list(table["Date"]) == list(text["Date"]) and list(table["StockID"]) == list(text["StockID"])
    for c in LABELS[2:]:
        np.testing.assert_array_equal(np.isnan(table[c]), np.isnan(text[c]), err_msg=c)
        np.testing.assert_allclose(table[c], text[c], rtol=1e-8, equal_nan=True, err_msg=c)  # the CSV has 9 digits
    return table


def test_jkx_dat_is_read_by_the_published_loader(tmp_path):
    """One raw uint8 file per year of the windows' last day, read with np.memmap(...).reshape(-1, H, W) exactly as
    the published training code does, with a label table per year (pandas; CSV and Feather) in the same order."""
    rows = dated_rows(130, seed=11)
    write_csv(tmp_path / "AAPL.csv", rows)
    prefix = tmp_path / "out" / "5d_week_has_vb_[5]_ma"
    args = ["render", tmp_path / "AAPL.csv", "--preset", "jkx5", "--stride", 2, "--mode", "cpu", "-q"]
    run_kiln(*args, "--format", "jkx-dat", "-o", prefix)
    run_kiln(*args, "-o", tmp_path / "all.npy")
    everything = np.load(tmp_path / "all.npy")

    import pandas as pd
    close = np.array([r[4] for r in rows], dtype=np.float32).astype(np.float64)
    dates = [r[0] for r in rows]
    starts = [s for s in range(0, len(rows) - 5 + 1, 2) if s >= 4]  # the 5-day average needs 4 days before
    ends = [s + 4 for s in starts]
    years = sorted({dates[e][:4] for e in ends})
    assert years == ["2019", "2020"]
    seen = 0
    for year in years:
        images = np.memmap(f"{prefix}_{year}_images.dat", dtype=np.uint8, mode="r").reshape((-1, 32, 15))
        labels = pd.read_csv(f"{prefix}_{year}_labels.csv")
        mine = [e for e in ends if dates[e][:4] == year]
        assert len(images) == len(labels) == len(mine)
        np.testing.assert_array_equal(images, everything[seen:seen + len(mine)])
        assert list(labels.columns) == ["Date", "StockID", "MarketCap", "Ret_5d", "Ret_20d", "Ret_60d"]
        assert list(labels["Date"]) == [dates[e] for e in mine] and set(labels["StockID"]) == {"AAPL"}
        assert labels["MarketCap"].isna().all()
        for days in (5, 20, 60):
            want = [close[e + days] / close[e] - 1 if e + days < len(rows) else np.nan for e in mine]
            np.testing.assert_allclose(labels[f"Ret_{days}d"], want, rtol=1e-7, equal_nan=True)
        table = feather_table_equal_to_csv(prefix, year)
        assert table["MarketCap"].isna().all() and table["Ret_60d"].isna().any() != (year == "2019")
        np.testing.assert_allclose(table["Ret_5d"], [close[e + 5] / close[e] - 1 if e + 5 < len(rows) else np.nan
                                                     for e in mine], rtol=1e-12, equal_nan=True)
        seen += len(mine)
    assert seen == len(everything)


def test_jkx_dat_resume_keeps_finished_years(tmp_path):
    rows = dated_rows(130, seed=12)
    write_csv(tmp_path / "p.csv", rows)
    prefix = tmp_path / "p"
    args = ["render", tmp_path / "p.csv", "--preset", "jkx5", "--format", "jkx-dat", "-o", prefix, "--mode", "cpu",
            "-q"]
    run_kiln(*args)
    first, last = f"{prefix}_2019_images.dat", f"{prefix}_2020_images.dat"
    tables = [f"{prefix}_{year}_labels.{kind}" for year in (2019, 2020) for kind in ("csv", "feather")]

    def contents():
        return [open(path, "rb").read() for path in [first, last, *tables]]

    finished = contents()
    # A run killed in 2020: the year's images only in a partial .part file, its CSV written, no Feather table.
    os.rename(last, last + ".part")
    with open(last + ".part", "r+b") as f:
        f.truncate(len(finished[1]) // 2)
    os.remove(f"{prefix}_2020_labels.feather")
    inodes = [os.stat(path).st_ino for path in (first, tables[0], tables[1])]
    assert "exists" in run_kiln(*args, check=False).stderr
    result = run_kiln(*args, "--resume")
    assert "Resumed" in result.stdout or "resumed" in result.stdout.lower()
    assert [os.stat(path).st_ino for path in (first, tables[0], tables[1])] == inodes  # the finished year is kept
    assert contents() == finished
    assert not os.path.exists(last + ".part")
    # A year without its Feather table (written by a kiln before it, or lost) is not finished: resume redoes it.
    os.remove(tables[1])
    os.utime(first, ns=(0, 0))  # a file written again gets a new time (its inode number may be reused)
    run_kiln(*args, "--resume")
    assert os.stat(first).st_mtime_ns != 0 and contents() == finished
    feather_table_equal_to_csv(prefix, 2020)
    other = run_kiln(*args[:-1], "--stride", 2, "-q", "--resume", check=False)
    assert other.returncode != 0 and "other settings" in other.stderr


def test_jkx_dat_feather_labels_of_a_panel(tmp_path):
    """A panel's Feather tables hold each year's symbols, dates, returns and market caps as computed from the rows
    (test_render_panel.expected), at full float64 precision, and equal the CSV tables."""
    from test_render_panel import expected, make_panel, render, write_long_csv
    panel = make_panel()
    write_long_csv(tmp_path / "panel.csv", panel)
    render(tmp_path / "panel.csv", tmp_path / "jkx" / "p", "--format", "jkx-dat")
    windows = expected(panel)[0]
    for year in (2019, 2020):
        in_year = [w for w in windows if w["end_date"] // 10000 == year]
        table = feather_table_equal_to_csv(tmp_path / "jkx" / "p", year)
        assert list(table["StockID"]) == [w["symbol"] for w in in_year]
        assert list(table["Date"].dt.strftime("%Y%m%d").astype(int)) == [w["end_date"] for w in in_year]
        for column, name in (("MarketCap", "market_cap"), ("Ret_5d", "ret_5d"), ("Ret_20d", "ret_20d"),
                             ("Ret_60d", "ret_60d")):
            np.testing.assert_allclose(table[column], [w[name] for w in in_year], rtol=1e-12, equal_nan=True,
                                       err_msg=column)
        assert table["MarketCap"].notna().all() and table["Ret_20d"].isna().any()
