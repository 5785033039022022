"""Shared fixtures: seeded random-walk series and the kiln CLI path (KILN_CLI, set by ctest)."""
import os
import shutil
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "common"))
from pytest_require_gpu import pytest_runtest_makereport  # noqa: E402,F401  (GPU skips fail on the GPU machine)


def random_walk(n, seed=0, ohlc=False):
    rng = np.random.default_rng(seed)
    close = (100 + np.cumsum(rng.standard_normal(n))).astype(np.float32)
    if not ohlc:
        return close
    open_ = np.concatenate([[close[0]], close[:-1]]).astype(np.float32)
    spread = np.abs(rng.standard_normal(n)).astype(np.float32)
    high = np.maximum(open_, close) + spread
    low = np.minimum(open_, close) - spread
    return np.ascontiguousarray(np.stack([open_, high, low, close], axis=1), dtype=np.float32)


@pytest.fixture
def walk():
    return random_walk(400, seed=7)


@pytest.fixture
def ohlc_walk():
    return random_walk(300, seed=11, ohlc=True)


@pytest.fixture
def kiln_cli():
    path = os.environ.get("KILN_CLI") or shutil.which("kiln")
    if not path or not os.path.exists(path):
        pytest.skip("kiln CLI not found (set KILN_CLI)")
    return path


def ohlcv_frame(n, seed):
    """A random-walk OHLCV DataFrame of n days (Open, High, Low, Close, Volume)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    close = 50 + np.cumsum(rng.normal(0, 1, n))
    open_ = np.concatenate([[close[0]], close[:-1]])
    high = np.maximum(open_, close) + np.abs(rng.normal(0, 0.5, n))
    low = np.minimum(open_, close) - np.abs(rng.normal(0, 0.5, n))
    volume = rng.integers(1_000, 100_000, n).astype(np.float64)
    return pd.DataFrame({"Open": open_, "High": high, "Low": low, "Close": close, "Volume": volume})
