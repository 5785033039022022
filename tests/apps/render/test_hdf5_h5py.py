"""h5py reads kiln's HDF5 output: zstd through kiln's plugin, gzip and raw natively, shards through the VDS.

The files come from the C++ test Hdf5Fixture.WriteFilesForH5py (tests/apps/render/hdf5_vds_test.cpp), which writes a
deterministic pattern mirrored below. Environment (set by ctest): KILN_CLI, KILN_PLUGIN_DIR.
"""
import json
import os
import subprocess
import sys

KILN_PLUGIN_DIR = os.environ.get("KILN_PLUGIN_DIR", "")
DEBIAN_PLUGIN_DIR = "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins"
# HDF5_PLUGIN_PATH replaces the default directory, so keep Debian's after ours; set before h5py loads HDF5.
os.environ["HDF5_PLUGIN_PATH"] = KILN_PLUGIN_DIR + ":" + DEBIAN_PLUGIN_DIR

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

WIDTH, HEIGHT, SEQ_LEN = 24, 16, 12


def render_tests_binary_path():
    cli = os.environ.get("KILN_CLI")
    if not cli:
        return None
    path = os.path.join(os.path.dirname(cli), "tests", "kiln_tests_apps_render")
    return path if os.path.exists(path) else None


@pytest.fixture(scope="module")
def fixture_dir(tmp_path_factory):
    binary = render_tests_binary_path()
    if binary is None or not KILN_PLUGIN_DIR:
        pytest.skip("KILN_CLI / KILN_PLUGIN_DIR not set or kiln_tests_apps_render not built")
    out = tmp_path_factory.mktemp("h5py_fixtures")
    env = dict(os.environ, KILN_H5PY_FIXTURE_DIR=str(out))
    run = subprocess.run([binary, "--gtest_filter=Hdf5Fixture*"], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "[  PASSED  ] 1 test" in run.stdout, run.stdout
    return out


def pattern_u8(n):
    i = np.arange(n, dtype=np.int64)[:, None, None]
    y = np.arange(HEIGHT, dtype=np.int64)[None, :, None]
    x = np.arange(WIDTH, dtype=np.int64)[None, None, :]
    return ((i * 7 + y * 3 + x * 5 + (i * x * y) % 13) & 0xFF).astype(np.uint8)


def pattern_f32(n):
    i = np.arange(n, dtype=np.int64)[:, None, None]
    y = np.arange(HEIGHT, dtype=np.int64)[None, :, None]
    x = np.arange(WIDTH, dtype=np.int64)[None, None, :]
    return (((i * 31 + y * 17 + x) % 1000).astype(np.float32) * np.float32(0.25) - np.float32(100.0))


def pattern_sequences(n, channels):
    i = np.arange(n, dtype=np.float32)[:, None, None]
    t = np.arange(SEQ_LEN, dtype=np.float32)[None, :, None] * np.float32(0.5)
    c = np.arange(channels, dtype=np.float32)[None, None, :] * np.float32(0.125)
    seq = i + t + c
    return seq[:, :, 0] if channels == 1 else seq


def check_common(f, n, channels, labels):
    assert f["sequences"].dtype == np.float32
    np.testing.assert_array_equal(f["sequences"][()], pattern_sequences(n, channels))
    assert f["index"].dtype == np.int64
    np.testing.assert_array_equal(f["index"][()], np.arange(n, dtype=np.int64) * 3 + 100)
    if labels:
        assert f["labels"].dtype == np.int8
        np.testing.assert_array_equal(f["labels"][()], (np.arange(n) % 3 - 1).astype(np.int8))
    else:
        assert "labels" not in f
    a = f.attrs
    assert a["complete"] == 1
    assert a["count"] == n
    assert a["first_index"] == 0
    assert a["seq_len"] == SEQ_LEN
    assert a["stride"] == 1
    assert a["line_width"] == 1.5
    assert list(a["resolution"]) == [WIDTH, HEIGHT, 100]
    assert a["source"] == "prices.csv"
    assert a["column"] == "close"
    assert a["skipped_windows"] == 3
    assert a["dropped_no_future"] == 2
    assert a["kiln_version"] == "0.1.0"
    assert a["config"].startswith("{")
    assert a["created_at"] == "2024-01-02T03:04:05Z"


def test_zstd_single_file(fixture_dir):
    with h5py.File(fixture_dir / "zstd_u8.h5", "r") as f:
        images = f["images"]
        assert images.shape == (5000, HEIGHT, WIDTH)
        assert images.dtype == np.uint8
        assert images.chunks == (1, HEIGHT, WIDTH)
        dcpl = images.id.get_create_plist()
        assert dcpl.get_nfilters() == 2
        assert dcpl.get_filter(0)[0] == 32015
        assert tuple(dcpl.get_filter(0)[2]) == (1,)
        assert dcpl.get_filter(1)[0] == h5py.h5z.FILTER_FLETCHER32  # checked by libhdf5 on every read
        assert images.fletcher32
        np.testing.assert_array_equal(images[()], pattern_u8(5000))
        np.testing.assert_array_equal(images[4321], pattern_u8(4322)[4321])  # random access, second part
        assert f.attrs["compression"] == "zstd-1"
        check_common(f, 5000, 1, True)
    assert not (fixture_dir / "zstd_u8.h5.parts").exists()


def test_gzip_f32(fixture_dir):
    with h5py.File(fixture_dir / "gzip_f32.h5", "r") as f:
        images = f["images"]
        assert images.dtype == np.float32
        assert images.compression == "gzip"
        np.testing.assert_array_equal(images[()], pattern_f32(300))
        assert f.attrs["compression"] == "gzip-1"
        check_common(f, 300, 4, False)


def test_none(fixture_dir):
    with h5py.File(fixture_dir / "none_u8.h5", "r") as f:
        assert f["images"].compression is None
        np.testing.assert_array_equal(f["images"][()], pattern_u8(10))
        assert f.attrs["compression"] == "none"


def test_shards_vds(fixture_dir):
    with h5py.File(fixture_dir / "shards.h5", "r") as f:
        images = f["images"]
        assert images.is_virtual
        assert images.shape == (1000, HEIGHT, WIDTH)
        np.testing.assert_array_equal(images[()], pattern_u8(1000))
        np.testing.assert_array_equal(images[295:305], pattern_u8(305)[295:305])  # across a shard boundary
        sources = sorted({m.file_name for m in images.virtual_sources()})
        assert sources == ["shards_batch_0000.h5", "shards_batch_0001.h5", "shards_batch_0002.h5",
                           "shards_batch_0003.h5"]
        check_common(f, 1000, 1, True)
        assert f.attrs["images_per_file"] == 300
    with h5py.File(fixture_dir / "shards_batch_0003.h5", "r") as shard:
        assert shard.attrs["first_index"] == 900
        assert shard.attrs["count"] == 100
        assert shard.attrs["complete"] == 1
        np.testing.assert_array_equal(shard["images"][()], pattern_u8(1000)[900:])
    manifest = json.loads((fixture_dir / "shards.manifest.json").read_text())
    assert [s["count"] for s in manifest["shards"]] == [300, 300, 300, 100]
    assert manifest["totals"]["images"] == 1000


def test_zstd_without_plugin_fails_cleanly(fixture_dir):
    """Without kiln's plugin on HDF5_PLUGIN_PATH, reading zstd data raises an error (never garbage)."""
    env = dict(os.environ, HDF5_PLUGIN_PATH=DEBIAN_PLUGIN_DIR)
    code = (
        "import h5py, sys\n"
        "f = h5py.File(sys.argv[1], 'r')\n"
        "try:\n"
        "    f['images'][0]\n"
        "except Exception as e:\n"
        "    print('ERROR', type(e).__name__, e)\n"
        "    sys.exit(3)\n"
        "print('READ')\n"
    )
    run = subprocess.run([sys.executable, "-c", code, str(fixture_dir / "zstd_u8.h5")], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "ERROR" in run.stdout
