"""Shared helpers of the scale-out tests: the kiln binary (from ctest's environment), h5py with kiln's plugin."""
import os
import subprocess
import sys

import pytest

KILN = os.environ.get("KILN_CLI", os.path.join(os.path.dirname(__file__), "..", "..", "build", "kiln"))
PLUGIN_DIR = os.environ.get("KILN_PLUGIN_DIR", os.path.join(os.path.dirname(KILN), "plugins"))
# HDF5_PLUGIN_PATH replaces the default directory, so list both (see README).
os.environ["HDF5_PLUGIN_PATH"] = PLUGIN_DIR + ":/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins"
# Python tests import the module built next to the CLI.
PYTHON_DIR = os.path.join(os.path.dirname(KILN), "python")
sys.path.insert(0, PYTHON_DIR)

import h5py  # noqa: E402  (after HDF5_PLUGIN_PATH is set)
import numpy as np  # noqa: E402

# Variables a scheduler may have left in the test's own environment: a kiln run must see only what the test sets.
SCHEDULER_VARIABLES = [name for name in os.environ
                       if name.startswith(("SLURM_", "OMPI_COMM_WORLD_", "PMI_")) or name == "JOB_COMPLETION_INDEX"]


ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
COFFEE = "/usr/lib/python3/dist-packages/skimage/data/coffee.png"
HOPPER = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"


def face_photos(folder):
    """Six real photographs, each person appearing again two images later (so in another piece of 3), and one
    truncated JPEG: a piece's duplicates are only found at the merge."""
    import shutil
    shutil.copy(ASTRONAUT, folder / "a_astronaut.png")
    shutil.copy(COFFEE, folder / "b_coffee.png")
    shutil.copy(HOPPER, folder / "c_hopper.jpg")
    shutil.copy(ASTRONAUT, folder / "d_astronaut_again.png")
    (folder / "e_truncated.jpg").write_bytes(open(HOPPER, "rb").read()[:3000])
    shutil.copy(HOPPER, folder / "f_hopper_again.jpg")
    return folder


def run_kiln(*args, check=True, env=None, timeout=300, cwd=None):
    merged = {k: v for k, v in os.environ.items() if k not in SCHEDULER_VARIABLES}
    merged.update(env or {})
    result = subprocess.run([KILN, *map(str, args)], capture_output=True, text=True, env=merged, timeout=timeout,
                            cwd=cwd)
    if check and result.returncode != 0:
        raise AssertionError(f"kiln {' '.join(map(str, args))} failed ({result.returncode}):\n{result.stderr}")
    return result


def read_dataset(path):
    """Every dataset and attribute of an HDF5 file, as numpy arrays / python values."""
    with h5py.File(path, "r") as f:
        data = {name: f[name][()] for name in f.keys()}
        attrs = {key: (value.tolist() if isinstance(value, np.ndarray) else value) for key, value in f.attrs.items()}
    return data, attrs


def assert_same_data(a, b):
    data_a, _ = read_dataset(a)
    data_b, _ = read_dataset(b)
    assert sorted(data_a) == sorted(data_b)
    for name in data_a:
        np.testing.assert_array_equal(data_a[name], data_b[name], err_msg=name)


@pytest.fixture
def kiln():
    return run_kiln
