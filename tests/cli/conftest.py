"""Shared fixtures for tests that drive the kiln binary (paths come from ctest's environment)."""
import os
import signal
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
from pytest_require_gpu import pytest_runtest_makereport  # noqa: E402,F401  (GPU skips fail on the GPU machine)

KILN = os.environ.get("KILN_CLI", os.path.join(os.path.dirname(__file__), "..", "..", "build", "kiln"))
PLUGIN_DIR = os.environ.get("KILN_PLUGIN_DIR", os.path.join(os.path.dirname(KILN), "plugins"))
SYSTEM_PLUGIN_DIR = "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins"
# HDF5_PLUGIN_PATH replaces the default directory, so list both (see README).
os.environ["HDF5_PLUGIN_PATH"] = PLUGIN_DIR + ":" + SYSTEM_PLUGIN_DIR

import h5py  # noqa: E402  (after HDF5_PLUGIN_PATH is set)
import numpy as np  # noqa: E402


def run_kiln(*args, check=True, env=None, timeout=300):
    merged = dict(os.environ)
    merged.update(env or {})
    result = subprocess.run([KILN, *map(str, args)], capture_output=True, text=True, env=merged, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"kiln {' '.join(map(str, args))} failed ({result.returncode}):\n{result.stderr}")
    return result


def read_dataset(path):
    """All datasets and attributes of a kiln HDF5 output, as numpy arrays / python values."""
    with h5py.File(path, "r") as f:
        data = {name: f[name][()] for name in f.keys()}
        attrs = {key: (value.tolist() if isinstance(value, np.ndarray) else value) for key, value in f.attrs.items()}
    return data, attrs


def assert_same_output(a, b, ignore=("created_at",)):
    data_a, attrs_a = read_dataset(a)
    data_b, attrs_b = read_dataset(b)
    assert sorted(data_a) == sorted(data_b)
    for name in data_a:
        np.testing.assert_array_equal(data_a[name], data_b[name], err_msg=name)
    for key in set(attrs_a) | set(attrs_b):
        if key not in ignore:
            assert attrs_a.get(key) == attrs_b.get(key), key


def kill_once_made(args, marker, timeout=120):
    """Runs kiln with `args` and kills it with SIGKILL as soon as the file `marker` (a first part) exists; fails when
    the run ends before (the test's input is then too small to catch it mid-run)."""
    process = subprocess.Popen([KILN, *map(str, args)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL, "the run ended before the kill: give it more input"
    assert marker.exists()


@pytest.fixture
def kiln():
    return run_kiln
