"""kiln.render: shapes, dtypes, zero-copy input, errors, CLI equality, GIL release."""
import subprocess
import sys
import threading

import numpy as np
import pytest

import kiln
from conftest import random_walk


def windows_of(series, seq_len=50, count=6):
    return np.ascontiguousarray(np.stack([series[i:i + seq_len] for i in range(count)]))


def test_shape_dtype_and_defaults(walk):
    images = kiln.render(windows_of(walk))
    assert images.shape == (6, 500, 800)
    assert images.dtype == np.uint8
    assert images.min() == 0 and images.max() == 255  # black ink on white
    small = kiln.render(windows_of(walk), width=64, height=32, line_width=1.5)
    assert small.shape == (6, 32, 64)


def test_float32_output(walk):
    u8 = kiln.render(windows_of(walk), width=80, height=60)
    f32 = kiln.render(windows_of(walk), width=80, height=60, dtype="float32")
    assert f32.dtype == np.float32 and f32.shape == u8.shape
    assert np.allclose(f32, u8 / 255.0, atol=1.0 / 255)


def test_readonly_float32_input_is_used_in_place(walk):
    w = windows_of(walk)
    w.flags.writeable = False
    before = w.copy()
    refs = sys.getrefcount(w)
    images = kiln.render(w, width=100, height=80)
    assert np.array_equal(w, before)
    assert sys.getrefcount(w) == refs  # no reference kept
    assert images.shape == (6, 80, 100)


def test_float64_and_strided_inputs_match_float32(walk):
    w32 = windows_of(walk)
    expected = kiln.render(w32, width=120, height=90)
    assert np.array_equal(kiln.render(w32.astype(np.float64), width=120, height=90), expected)
    fortran = np.asfortranarray(w32)
    assert np.array_equal(kiln.render(fortran, width=120, height=90), expected)
    wide = np.zeros((6, 100), np.float32)
    wide[:, ::2] = w32
    assert np.array_equal(kiln.render(wide[:, ::2], width=120, height=90), expected)
    assert np.array_equal(kiln.render(w32.tolist(), width=120, height=90), expected)


@pytest.mark.parametrize("bad, what", [
    (np.zeros((3, 50), np.int64), "dtype"),
    (np.zeros((3, 50), object), "dtype"),
    (np.zeros((3, 50), bool), "dtype"),
    (np.zeros(50, np.float32), "shape"),
    (np.zeros((2, 3, 50, 1), np.float32), "shape"),
    (np.zeros((3, 50, 3), np.float32), "shape"),
    (np.zeros((3, 1), np.float32), "seq_len"),
    ("not an array", "dtype"),
])
def test_bad_input_raises_value_error(bad, what):
    with pytest.raises(kiln.KilnValueError) as info:
        kiln.render(bad, width=32, height=32)
    assert isinstance(info.value, ValueError) and isinstance(info.value, kiln.KilnError)
    assert str(info.value)


def test_bad_parameters_raise_value_error(walk):
    w = windows_of(walk)
    for kwargs in ({"style": "candles"}, {"mode": "tpu"}, {"dtype": "int16"}, {"width": 0}, {"line_width": -1.0}):
        with pytest.raises(ValueError):
            kiln.render(w, **{"width": 32, "height": 32, **kwargs})


def test_ohlc_needs_four_channels(walk, ohlc_walk):
    with pytest.raises(kiln.KilnValueError):
        kiln.render(windows_of(walk), style="ohlc", width=200, height=100)
    bars = np.stack([ohlc_walk[i:i + 50] for i in range(4)])
    images = kiln.render(bars, style="ohlc", width=200, height=100)
    assert images.shape == (4, 100, 200) and images.min() < 255
    # A line chart of a 4-channel window draws Close.
    assert np.array_equal(kiln.render(bars, width=120, height=90),
                          kiln.render(np.ascontiguousarray(bars[..., 3]), width=120, height=90))


def test_mode_cpu_equals_auto_and_threads_agree(walk):
    w = windows_of(walk, count=9)
    cpu = kiln.render(w, mode="cpu", threads=1, width=160, height=100)
    assert np.array_equal(kiln.render(w, mode="cpu", threads=0, width=160, height=100), cpu)
    assert np.array_equal(kiln.render(w, mode="auto", width=160, height=100), cpu)


def test_empty_batch(walk):
    assert kiln.render(np.zeros((0, 50), np.float32), width=40, height=30).shape == (0, 30, 40)


def test_render_windows_views_equal_render(walk):
    starts = np.array([0, 5, 17, 300], np.int64)
    views = kiln.render_windows(walk, starts, 60, width=100, height=70)
    copies = np.stack([walk[s:s + 60] for s in starts])
    assert np.array_equal(views, kiln.render(copies, width=100, height=70))
    with pytest.raises(kiln.KilnValueError):
        kiln.render_windows(walk, np.array([len(walk) - 10]), 60)
    with pytest.raises(kiln.KilnValueError):
        kiln.render_windows(walk, np.array([0.5]), 60)


def test_equals_cli_output(tmp_path, kiln_cli):
    series = random_walk(130, seed=3)
    np.save(tmp_path / "s.npy", series)
    out = tmp_path / "out.npy"
    subprocess.run([kiln_cli, "render", str(tmp_path / "s.npy"), "-o", str(out), "--format", "npy", "--seq-len", "100",
                    "--width", "320", "--height", "200", "--line-width", "3", "--mode", "cpu", "-q"], check=True)
    cli_images = np.load(out)
    windows = np.stack([series[i:i + 100] for i in range(31)])
    assert cli_images.shape == (31, 200, 320)
    assert np.array_equal(kiln.render(windows, width=320, height=200, line_width=3), cli_images)


def test_gil_released_concurrent_threads_agree():
    w = np.stack([random_walk(100, seed=s) for s in range(16)])
    expected = kiln.render(w, threads=1, width=400, height=250)
    results = [None] * 4

    def work(k):
        results[k] = kiln.render(w, threads=1, width=400, height=250)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(r, expected) for r in results)


def test_gil_is_released_during_render():
    # While one thread renders a long batch, another Python thread keeps running.
    w = np.stack([random_walk(100, seed=s) for s in range(400)])
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        kiln.render(w, threads=1)
    finally:
        done.set()
        t.join()
    assert len(ticks) > 5


def test_devices_cpu_last_and_available():
    backends = kiln.devices()
    assert backends[-1]["name"] == "cpu" and backends[-1]["available"]
    assert backends[-1]["devices"] and {"name", "total_memory", "compute_units"} <= set(backends[-1]["devices"][0])
    assert [b["priority"] for b in backends] == list(range(len(backends)))


def test_version_and_error_hierarchy():
    assert kiln.__version__
    assert issubclass(kiln.KilnIOError, OSError) and issubclass(kiln.KilnIOError, kiln.KilnError)
    assert issubclass(kiln.KilnDeviceError, RuntimeError)
    assert issubclass(kiln.KilnMemoryError, MemoryError)
    assert issubclass(kiln.KilnNotImplementedError, NotImplementedError)
