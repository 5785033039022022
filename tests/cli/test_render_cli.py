"""kiln render from the command line: inputs, errors, config layering, determinism, shards."""
import json
import os

import h5py
import numpy as np
import pytest

from conftest import assert_same_output, read_dataset, run_kiln


def write_csv(path, header, rows):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for row in rows:
            f.write(",".join(str(v) for v in row) + "\n")


def price_rows(n, seed=1):
    rng = np.random.default_rng(seed)
    close = 100 + np.cumsum(rng.normal(0, 1, n))
    return [(i, close[i] - 0.5, close[i] + 1, close[i] - 1, close[i]) for i in range(n)]


HEADER = ["Date", "Open", "High", "Low", "Close"]


def test_csv_to_hdf5_roundtrip(tmp_path):
    rows = price_rows(80)
    write_csv(tmp_path / "p.csv", HEADER, rows)
    out = tmp_path / "out.h5"
    run_kiln("render", tmp_path / "p.csv", "-o", out, "--seq-len", 20, "--stride", 3, "--width", 64, "--height", 32,
             "--threads", 2)
    data, attrs = read_dataset(out)
    n = (80 - 20) // 3 + 1
    assert data["images"].shape == (n, 32, 64) and data["images"].dtype == np.uint8
    assert data["sequences"].shape == (n, 20)
    np.testing.assert_array_equal(data["index"], np.arange(0, 3 * n, 3))
    close = np.array([r[4] for r in rows], dtype=np.float32)
    np.testing.assert_array_equal(data["sequences"][1], close[3:23])
    assert attrs["complete"] == 1
    assert attrs["seq_len"] == 20 and attrs["stride"] == 3
    assert list(attrs["resolution"])[:2] == [64, 32]
    assert attrs["column"] == "Close"
    assert json.loads(attrs["config"])["seq_len"] == 20
    with h5py.File(out, "r") as f:
        assert f["images"].chunks == (1, 32, 64)
    assert not os.path.exists(str(out) + ".parts")


def test_nan_windows_are_skipped_and_counted(tmp_path):
    rows = price_rows(50)
    rows[10] = (10, 1, 2, 0, "nan")
    write_csv(tmp_path / "p.csv", HEADER, rows)
    out = tmp_path / "out.h5"
    result = run_kiln("render", tmp_path / "p.csv", "-o", out, "--seq-len", 10, "--width", 32, "--height", 16)
    data, attrs = read_dataset(out)
    assert attrs["skipped_windows"] == 10  # windows starting at rows 1..10 contain row 10
    assert data["images"].shape[0] == 41 - 10
    assert "skipped windows (NaN/inf): 10" in result.stdout
    for start in data["index"]:
        assert not (start <= 10 < start + 10)


@pytest.mark.parametrize("content,needle", [
    ("", "empty"),
    ("Date,Open,High,Low\n1,2,3,4\n", "Close"),
    ("Date,Close\n1,2\n2,abc\n3,4\n", "bad.csv:3: column 'close'"),
])
def test_bad_csv_gives_one_line_error_and_writes_nothing(tmp_path, content, needle):
    (tmp_path / "bad.csv").write_text(content)
    out = tmp_path / "out.h5"
    result = run_kiln("render", tmp_path / "bad.csv", "-o", out, "--seq-len", 2, check=False)
    assert result.returncode != 0
    lines = [l for l in result.stderr.strip().splitlines() if l.startswith("kiln:")]
    assert len(lines) == 1, result.stderr
    assert "bad.csv" in lines[0] and needle.lower() in lines[0].lower(), lines[0]
    assert os.listdir(tmp_path) == ["bad.csv"]


def test_seq_len_longer_than_series_is_refused(tmp_path):
    write_csv(tmp_path / "p.csv", HEADER, price_rows(30))
    result = run_kiln("render", tmp_path / "p.csv", "-o", tmp_path / "o.h5", "--seq-len", 31, check=False)
    assert result.returncode == 2 and "p.csv" in result.stderr and "31" in result.stderr
    assert not (tmp_path / "o.h5").exists()


def test_existing_output_needs_resume_or_overwrite(tmp_path):
    out = tmp_path / "d.h5"
    args = ["render", "--demo", "--demo-points", 150, "-o", out, "--width", 40, "--height", 20, "-q"]
    run_kiln(*args)
    again = run_kiln(*args, check=False)
    assert again.returncode != 0 and "--overwrite" in again.stderr
    run_kiln(*args, "--overwrite")
    assert read_dataset(out)[1]["complete"] == 1


def test_mode_gpu_without_gpu_fails_clearly(tmp_path):
    result = run_kiln("render", "--demo", "-o", tmp_path / "g.h5", "--mode", "gpu", check=False)
    assert result.returncode != 0
    assert "gpu" in result.stderr.lower() and not (tmp_path / "g.h5").exists()


def test_auto_mode_logs_cpu_and_why(tmp_path):
    result = run_kiln("render", "--demo", "--demo-points", 120, "-o", tmp_path / "a.h5", "--width", 40, "--height", 20)
    assert "Rendering mode: CPU" in result.stderr
    assert "Processed 21/21 images (CPU)" in result.stderr


def test_same_output_at_any_thread_count_and_batch_size(tmp_path):
    base = ["render", "--demo", "--demo-points", 700, "--width", 120, "--height", 60, "-q"]
    run_kiln(*base, "-o", tmp_path / "t1.h5", "--threads", 1, "--batch-size", 1000)
    run_kiln(*base, "-o", tmp_path / "t2.h5", "--threads", 2, "--batch-size", 7)
    run_kiln(*base, "-o", tmp_path / "t3.h5", "--threads", 3, "--batch-size", 64, env={"KILN_CPU_ISA": "scalar"})
    assert_same_output(tmp_path / "t1.h5", tmp_path / "t2.h5")
    assert_same_output(tmp_path / "t1.h5", tmp_path / "t3.h5")


def test_gzip_and_none_hold_the_same_images_as_zstd(tmp_path):
    base = ["render", "--demo", "--demo-points", 300, "--width", 80, "--height", 40, "-q"]
    for c in ("zstd", "gzip", "none"):
        run_kiln(*base, "-o", tmp_path / f"{c}.h5", "--compression", c)
    z = read_dataset(tmp_path / "zstd.h5")[0]["images"]
    for c in ("gzip", "none"):
        np.testing.assert_array_equal(read_dataset(tmp_path / f"{c}.h5")[0]["images"], z)


def test_float32_dtype_matches_uint8_levels(tmp_path):
    base = ["render", "--demo", "--demo-points", 130, "--width", 50, "--height", 30, "-q"]
    run_kiln(*base, "-o", tmp_path / "u8.h5")
    run_kiln(*base, "-o", tmp_path / "f32.h5", "--dtype", "float32")
    u8 = read_dataset(tmp_path / "u8.h5")[0]["images"]
    f32 = read_dataset(tmp_path / "f32.h5")[0]["images"]
    assert f32.dtype == np.float32 and f32.max() == 1.0 and f32.min() == 0.0
    assert np.abs(f32 * 255 - u8).max() <= 0.5 + 1e-3


def test_ohlc_style_uses_four_pixels_per_bar(tmp_path):
    write_csv(tmp_path / "p.csv", HEADER, price_rows(40))
    run_kiln("render", tmp_path / "p.csv", "-o", tmp_path / "o.h5", "--style", "ohlc", "--seq-len", 25, "-q")
    data, attrs = read_dataset(tmp_path / "o.h5")
    assert data["images"].shape[1:] == (500, 100)
    assert data["sequences"].shape[1:] == (25, 4)
    assert attrs["style"] == "ohlc"


def test_candlestick_style_draws_bodies_from_open_to_close(tmp_path):
    write_csv(tmp_path / "p.csv", HEADER, price_rows(40))
    args = ["--seq-len", 25, "--width", 100, "--height", 60, "-q"]
    run_kiln("render", tmp_path / "p.csv", "-o", tmp_path / "c.h5", "--style", "candlestick", *args)
    run_kiln("render", tmp_path / "p.csv", "-o", tmp_path / "b.h5", "--style", "ohlc", *args)
    candles, attrs = read_dataset(tmp_path / "c.h5")
    bars, _ = read_dataset(tmp_path / "b.h5")
    assert attrs["style"] == "candlestick" and candles["sequences"].shape[1:] == (25, 4)
    # The wick column (sub-column 1 of each bar) is the same in both; the body columns hold more ink than ticks.
    assert (candles["images"] < 255).sum() > (bars["images"] < 255).sum()
    wick = [4 * k + 1 for k in range(25)]
    np.testing.assert_array_equal(candles["images"][:, :, wick], bars["images"][:, :, wick])


def test_labels(tmp_path):
    close = [1, 2, 3, 2, 2, 5, 4, 4]
    write_csv(tmp_path / "p.csv", ["Close"], [(c,) for c in close])
    run_kiln("render", tmp_path / "p.csv", "-o", tmp_path / "l.h5", "--seq-len", 2, "--label-horizon", 1,
             "--width", 16, "--height", 8, "-q")
    data, attrs = read_dataset(tmp_path / "l.h5")
    # window [i, i+1], label = close[i+2] > close[i+1]
    np.testing.assert_array_equal(data["labels"], [1, 0, 0, 1, 0, 0])
    assert attrs["dropped_no_future"] == 1


def test_zstd_compressed_hdf5_input_needs_no_plugin_path(tmp_path):
    close = np.cumsum(np.random.default_rng(2).normal(size=300)).astype(np.float64) + 100
    with h5py.File(tmp_path / "in.h5", "w") as f:  # written through kiln's plugin (HDF5_PLUGIN_PATH in conftest)
        f.create_dataset("prices/close", data=close, chunks=(64,), compression=32015, compression_opts=(3,))
    out = tmp_path / "out.h5"
    run_kiln("render", f"{tmp_path / 'in.h5'}:/prices/close", "-o", out, "--seq-len", 50, "--width", 40,
             "--height", 20, "-q", env={"HDF5_PLUGIN_PATH": "/nonexistent"})
    data, attrs = read_dataset(out)
    np.testing.assert_array_equal(data["sequences"][0], close[:50].astype(np.float32))
    assert attrs["source"].endswith("in.h5:/prices/close")


def test_predecessor_config_is_accepted_and_flags_win(tmp_path):
    (tmp_path / "config.yaml").write_text(
        "data:\n  symbol: BTCUSDT\n  interval: 1m\n"
        "image:\n  seq_len: 30\n  line_width: 2\n  batch_size: 10000\n"
        "  resolution: {width: 90, height: 45, dpi: 100}\n"
        "  rendering: {mode: auto, gpu_batch_size: 5000, fallback_on_error: true}\n"
        "  storage: {format: hdf5, mode: single, images_per_file: 50000}\n"
        "paths: {raw_data: data/raw}\n")
    out = tmp_path / "c.h5"
    run_kiln("render", "--demo", "--demo-points", 100, "-o", out, "--config", tmp_path / "config.yaml",
             "--height", 40, "-q")
    data, attrs = read_dataset(out)
    assert data["images"].shape == (71, 40, 90)  # seq_len 30 and width from the file, height from the flag
    assert attrs["line_width"] == 2.0


def test_shards_and_virtual_dataset(tmp_path):
    out = tmp_path / "s.h5"
    run_kiln("render", "--demo", "--demo-points", 349, "-o", out, "--images-per-file", 100, "--width", 48,
             "--height", 24, "-q")
    single = tmp_path / "one.h5"
    run_kiln("render", "--demo", "--demo-points", 349, "-o", single, "--width", 48, "--height", 24, "-q")
    shards = sorted(p.name for p in tmp_path.glob("s_batch_*.h5"))
    assert shards == ["s_batch_0000.h5", "s_batch_0001.h5", "s_batch_0002.h5"]
    manifest = json.loads((tmp_path / "s.manifest.json").read_text())
    assert sum(s["count"] for s in manifest["shards"]) == 250
    np.testing.assert_array_equal(read_dataset(out)[0]["images"], read_dataset(single)[0]["images"])
    info = run_kiln("info", out)
    assert "s_batch_0002.h5" in info.stdout


def test_png_jpeg_npy_formats(tmp_path):
    base = ["render", "--demo", "--demo-points", 104, "--width", 60, "--height", 30, "-q"]
    run_kiln(*base, "-o", tmp_path / "png", "--format", "png")
    run_kiln(*base, "-o", tmp_path / "jpg", "--format", "jpeg")
    run_kiln(*base, "-o", tmp_path / "x.npy")
    run_kiln(*base, "-o", tmp_path / "ref.h5")
    ref = read_dataset(tmp_path / "ref.h5")[0]["images"]
    pngs = sorted(os.listdir(tmp_path / "png"))
    assert "price_pattern_000000.png" in pngs and "price_pattern_000004.png" in pngs
    np.testing.assert_array_equal(np.load(tmp_path / "x.npy"), ref)
    assert len([p for p in os.listdir(tmp_path / "jpg") if p.endswith(".jpg")]) == 5


def test_preview_and_info(tmp_path):
    from PIL import Image

    out = tmp_path / "p.h5"
    run_kiln("render", "--demo", "--demo-points", 120, "-o", out, "--width", 64, "--height", 32,
             "--preview", tmp_path / "grid.png", "-q")
    # 16 of the 21 windows (sampled across them: preview_sample's test) in 4 columns, each captioned with its index
    # in a light strip under it.
    grid = np.asarray(Image.open(tmp_path / "grid.png"))
    assert grid.shape[1] == 4 * 64 + 3 * 2 and grid.shape[2] == 3
    cell = (grid.shape[0] - 3 * 2) // 4
    assert cell > 32 and grid.shape[0] == 4 * cell + 3 * 2
    strip = grid[32:cell, :64, 0]
    assert (strip == 236).mean() > 0.5 and (strip < 100).sum() > 20  # the strip's gray and the caption's strokes
    info = run_kiln("info", out).stdout
    assert "images" in info and "skipped_windows" in info


def test_trace_and_profile(tmp_path):
    trace = tmp_path / "trace.json"
    result = run_kiln("--profile", "--trace", trace, "render", "--demo", "--demo-points", 700, "--width", 64,
                      "--height", 32, "--batch-size", 100, "-o", tmp_path / "t.h5", "-q")
    assert "render" in result.stderr and "p95 ms" in result.stderr  # the --profile table
    events = json.loads(trace.read_text())["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    assert {"batch", "render", "encode", "write", "finish"} <= {e["name"] for e in complete}
    assert all(e["dur"] >= 0 and {"ts", "pid", "tid"} <= set(e) for e in complete)
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"main", "source", "render+encode"} <= names  # pipeline stage workers are named after their stage
    counters = {e["name"] for e in events if e["ph"] == "C"}
    assert {"queue: render+encode", "queue: sink", "images written"} <= counters
    starts = {e["id"] for e in events if e["ph"] == "s"}
    ends = {e["id"] for e in events if e["ph"] == "f"}
    assert starts == ends and len(starts) == 7  # 601 windows in batches of 100: one flow each, worker -> writer
