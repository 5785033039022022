"""ChartDataset: indexing, NaN skipping, labels, batches, pickling, torch DataLoader."""
import pickle

import numpy as np
import pandas as pd
import pytest

import kiln
from conftest import random_walk

SIZE = dict(width=64, height=48, line_width=2.0)


def test_len_and_getitem_equal_render(walk):
    ds = kiln.ChartDataset(walk, seq_len=50, stride=3, **SIZE)
    assert len(ds) == (len(walk) - 50) // 3 + 1
    for i in (0, 7, len(ds) - 1, -1):
        start = int(ds.starts[i])
        expected = kiln.render(walk[None, start:start + 50], **SIZE)[0]
        image = ds[i]
        assert image.shape == (48, 64) and image.dtype == np.uint8
        assert np.array_equal(image, expected)
    with pytest.raises(IndexError):
        ds[len(ds)]


def test_dataframe_and_ohlc(ohlc_walk):
    frame = pd.DataFrame(ohlc_walk, columns=["open", "high", "low", "close"])
    line = kiln.ChartDataset(frame, seq_len=30, **SIZE)
    assert np.array_equal(line[3], kiln.render(ohlc_walk[None, 3:33, 3], **SIZE)[0])
    bars = kiln.ChartDataset(frame, seq_len=30, style="ohlc", width=120, height=60)
    assert np.array_equal(bars[2], kiln.render(ohlc_walk[None, 2:32], style="ohlc", width=120, height=60)[0])
    candles = kiln.ChartDataset(frame, seq_len=30, style="candlestick", width=120, height=60)
    want = kiln.render(ohlc_walk[None, 2:32], style="candlestick", width=120, height=60)[0]
    assert np.array_equal(candles[2], want) and not np.array_equal(candles[2], bars[2])


def test_nan_windows_skipped(walk):
    series = walk.copy()
    series[100] = np.nan
    ds = kiln.ChartDataset(series, seq_len=20, **SIZE)
    assert ds.skipped == 20
    assert len(ds) == len(series) - 20 + 1 - 20
    assert not any(s <= 100 < s + 20 for s in ds.starts)


def test_labels(walk):
    ds = kiln.ChartDataset(walk, seq_len=30, label_horizon=5, **SIZE)
    image, label = ds[10]
    start = int(ds.starts[10])
    up = walk[start + 29 + 5] > walk[start + 29]
    assert label == int(up)
    assert image.shape == (48, 64)
    three = kiln.ChartDataset(walk, seq_len=30, label_horizon=5, label_threshold=0.001, **SIZE)
    assert set(np.unique(three.labels)) <= {0, 1, 2}


def test_get_batch(walk):
    ds = kiln.ChartDataset(walk, seq_len=40, **SIZE)
    idx = [0, 5, 9, 5]
    batch = ds.get_batch(idx)
    assert batch.shape == (4, 48, 64)
    assert all(np.array_equal(batch[k], ds[i]) for k, i in enumerate(idx))
    labelled = kiln.ChartDataset(walk, seq_len=40, label_horizon=3, **SIZE)
    images, labels = labelled.get_batch([1, 2])
    assert images.shape == (2, 48, 64) and labels.shape == (2,)


def test_float32_dtype(walk):
    ds = kiln.ChartDataset(walk, seq_len=40, dtype="float32", **SIZE)
    assert ds[0].dtype == np.float32 and ds[0].max() <= 1.0


def test_pickle_round_trip(walk):
    ds = kiln.ChartDataset(walk, seq_len=40, label_horizon=2, **SIZE)
    copy = pickle.loads(pickle.dumps(ds))
    assert len(copy) == len(ds)
    assert np.array_equal(copy[4][0], ds[4][0]) and copy[4][1] == ds[4][1]


def test_bad_arguments(walk):
    with pytest.raises(kiln.KilnValueError):
        kiln.ChartDataset(walk, style="candles")
    with pytest.raises(kiln.KilnValueError):
        kiln.ChartDataset(walk, style="ohlc")  # needs (N, 4)
    with pytest.raises(ValueError):
        kiln.ChartDataset(walk[:10], seq_len=50)


def test_torch_dataloader_workers(walk):
    torch = pytest.importorskip("torch", reason="needs torch (not installed on this host)")
    ds = kiln.ChartDataset(walk, seq_len=50, **SIZE)
    loader = torch.utils.data.DataLoader(ds, batch_size=8, num_workers=2, shuffle=False)
    seen = 0
    for batch in loader:
        assert isinstance(batch, torch.Tensor) and batch.dtype == torch.uint8
        starts = ds.starts[seen:seen + batch.shape[0]]
        expected = kiln.render(np.stack([walk[s:s + 50] for s in starts]), **SIZE)
        assert np.array_equal(batch.numpy(), expected)
        seen += batch.shape[0]
    assert seen == len(ds)
