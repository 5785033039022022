"""create_images_from_data and kiln.open."""
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import kiln
from conftest import random_walk


def test_dataframe_to_hdf5_readable_with_metadata(tmp_path):
    close = random_walk(140, seed=5)
    frame = pd.DataFrame({"open": close, "CLOSE": close, "volume": np.ones_like(close)})
    path = str(tmp_path / "charts.h5")
    returned = kiln.create_images_from_data(
        frame, path, seq_len=40, line_width=2, resolution={"width": 96, "height": 64, "dpi": 100},
        storage_config={"format": "hdf5", "mode": "single"}, metadata={"symbol": "BTCUSDT", "interval": "1m"},
        rendering_config={"mode": "cpu"})
    assert returned == path
    with kiln.open(path) as f:
        assert len(f) == 101
        images = f.images[:]
        assert f.sequences.shape == (101, 40)
        assert list(f.index[:5]) == [0, 1, 2, 3, 4]
        assert f.labels is None
        assert json.loads(f.attrs["metadata"]) == {"symbol": "BTCUSDT", "interval": "1m"}
    windows = np.stack([close[i:i + 40] for i in range(101)])
    assert np.array_equal(images, kiln.render(windows, width=96, height=64, line_width=2))


def test_batch_mode_shards(tmp_path):
    path = str(tmp_path / "sharded.h5")
    kiln.create_images_from_data(random_walk(120, seed=2), path, seq_len=20, resolution={"width": 32, "height": 24},
                                 storage_config={"format": "h5", "mode": "batch", "images_per_file": 40},
                                 metadata={"k": 1})
    with kiln.open(path) as f:
        assert len(f) == 101
        assert json.loads(f.attrs["metadata"]) == {"k": 1}
    assert any("_batch_" in name for name in os.listdir(tmp_path))


def test_default_storage_is_jpeg_folder_800x500(tmp_path):
    out = str(tmp_path / "jpegs")
    kiln.create_images_from_data(random_walk(103, seed=1), out, metadata={"a": 1})
    names = sorted(n for n in os.listdir(out) if n.endswith(".jpg"))
    assert len(names) == 4 and names[0] == "price_pattern_000000.jpg"
    with open(os.path.join(out, names[0]), "rb") as f:
        data = f.read()
    assert data[:2] == b"\xff\xd8"
    assert _jpeg_size(data) == (800, 500)
    with open(os.path.join(out, "metadata.json"), encoding="utf-8") as f:
        assert json.load(f) == {"a": 1}


def _jpeg_size(data):
    i = 2
    while i < len(data):
        marker, length = data[i + 1], int.from_bytes(data[i + 2:i + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2):
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        i += 2 + length
    raise AssertionError("no SOF marker")


def test_numpy_input_to_npy(tmp_path):
    series = random_walk(60, seed=9)
    path = str(tmp_path / "x.npy")
    kiln.create_images_from_data(series, path, seq_len=30, resolution={"width": 40, "height": 30},
                                 storage_config={"format": "npy"}, metadata={"n": 2})
    images = np.load(path)
    windows = np.stack([series[i:i + 30] for i in range(31)])
    assert np.array_equal(images, kiln.render(windows, width=40, height=30, line_width=3))
    assert os.path.exists(str(tmp_path / "x.metadata.json"))


@pytest.mark.parametrize("fmt", ["npz", "zarr"])
def test_unsupported_formats(tmp_path, fmt):
    with pytest.raises(kiln.KilnValueError, match="not supported"):
        kiln.create_images_from_data(random_walk(200), str(tmp_path / "x"), storage_config={"format": fmt})


def test_existing_output_and_bad_input(tmp_path):
    path = str(tmp_path / "x.h5")
    args = dict(seq_len=20, resolution={"width": 32, "height": 24}, storage_config={"format": "hdf5"})
    kiln.create_images_from_data(random_walk(50), path, **args)
    with pytest.raises(ValueError):
        kiln.create_images_from_data(random_walk(50), path, **args)
    with pytest.raises(kiln.KilnValueError, match="Close"):
        kiln.create_images_from_data(pd.DataFrame({"price": [1.0, 2.0]}), str(tmp_path / "y.h5"), **args)


def test_open_missing_file(tmp_path):
    with pytest.raises(kiln.KilnIOError):
        kiln.open(str(tmp_path / "missing.h5"))


def test_open_reads_cli_zstd_file_without_plugin_path(tmp_path, kiln_cli):
    np.save(tmp_path / "s.npy", random_walk(80, seed=4))
    out = tmp_path / "cli.h5"
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    subprocess.run([kiln_cli, "render", str(tmp_path / "s.npy"), "-o", str(out), "--seq-len", "50", "--width", "64",
                    "--height", "48", "--compression", "zstd", "-q"], check=True, env=env)
    script = (
        "import kiln, numpy as np\n"
        f"f = kiln.open({str(out)!r})\n"
        "imgs = f.images[:]\n"
        "assert imgs.shape == (31, 48, 64) and imgs.min() == 0 and imgs.max() == 255, imgs.shape\n"
        "assert f.attrs['compression'].startswith('zstd'), f.attrs['compression']\n"
        "f.close(); print('ok')\n")
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
