"""Volume panels, moving averages and the JKX presets from Python: ChartDataset, kiln.render and kiln.render_job
give the images `kiln render` gives, under the same setting names."""
import numpy as np

import kiln
from conftest import ohlcv_frame


def test_preset_dataset_equals_the_render_job(tmp_path):
    frame = ohlcv_frame(160, 5)
    dataset = kiln.ChartDataset(frame, preset="jkx20")
    assert len(dataset) == 160 - 20 + 1 - 19  # the 20-day average needs 19 days before a window
    array = frame[["Open", "High", "Low", "Close", "Volume"]].to_numpy(np.float32)
    summary = kiln.render_job(array, output=str(tmp_path / "job.npy"), preset="jkx20", mode="cpu")
    job = np.load(tmp_path / "job.npy")
    assert summary["images"] == len(dataset) and job.shape == (len(dataset), 64, 60)
    np.testing.assert_array_equal(dataset.get_batch(range(len(dataset))), job)
    np.testing.assert_array_equal(dataset[5], job[5])
    assert set(np.unique(job)) == {0, 255} and job[:, 64 - 12:].any()  # white on black, volume bars at the bottom


def test_volume_and_moving_averages_through_render_and_render_windows():
    frame = ohlcv_frame(160, 6)
    prices = frame[["Open", "High", "Low", "Close"]].to_numpy(np.float32)
    series = kiln.chart_series(prices, frame["Volume"].to_numpy(np.float32), [5, 10])
    assert series.shape == (160, 7) and np.isnan(series[:9, 6]).all()
    np.testing.assert_allclose(series[20, 5], frame["Close"][16:21].mean(), rtol=1e-6)
    settings = dict(style="candlestick", width=120, height=80, volume=True, volume_height=20, moving_averages=2)
    starts, _, skipped = kiln.window_plan(series, seq_len=30, ohlc=True, layers=3)
    assert starts[0] == 9 and skipped == 9
    images = kiln.render_windows(series, starts[:4], 30, **settings)
    windows = np.stack([series[s:s + 30] for s in starts[:4]])
    np.testing.assert_array_equal(kiln.render(windows, **settings), images)
    plain = kiln.render(windows[:, :, :4], style="candlestick", width=120, height=80)
    assert not np.array_equal(images, plain) and (images[:, 60:] == 0).any()  # ink in the volume panel
    dataset = kiln.ChartDataset(frame, seq_len=30, style="candlestick", width=120, height=80, volume=True,
                                moving_average=[5, 10], volume_height=20)
    np.testing.assert_array_equal(dataset.get_batch(range(4)), images)
