"""Colour charts from Python: kiln.render / render_windows and kiln.ChartDataset give (H, W, 3) arrays with
color=True, under the same colour names as `kiln render`, and the images of the render job."""
import numpy as np
import pytest

import kiln
from conftest import ohlcv_frame


def test_render_gives_rgb_arrays_whose_channels_are_the_gray_charts_of_their_components():
    rng = np.random.default_rng(1)
    windows = np.cumsum(rng.normal(0, 1, (3, 40)), axis=1).astype(np.float32)
    rgb = kiln.render(windows, width=90, height=50, line_width=2.5, color=True, color_line="#1e5ac8",
                      color_background="#faf0e6")
    assert rgb.shape == (3, 50, 90, 3) and rgb.dtype == np.uint8
    for c, (ink, background) in enumerate(zip((0x1E, 0x5A, 0xC8), (0xFA, 0xF0, 0xE6))):
        gray = kiln.render(windows, width=90, height=50, line_width=2.5, ink=ink, background=background)
        np.testing.assert_array_equal(rgb[..., c], gray)
    as_float = kiln.render(windows, width=90, height=50, color=True, dtype="float32")
    assert as_float.shape == (3, 50, 90, 3)
    with pytest.raises(kiln.KilnValueError, match="rrggbb"):
        kiln.render(windows, color=True, color_up="green")


def test_dataset_gives_the_jobs_colour_images(tmp_path):
    frame = ohlcv_frame(120, 9)
    settings = dict(style="candlestick", width=120, height=80, color=True)
    dataset = kiln.ChartDataset(frame, seq_len=30, volume=True, moving_average=(5,), color_up="#112233", **settings)
    array = frame[["Open", "High", "Low", "Close", "Volume"]].to_numpy(np.float32)
    kiln.render_job(array, output=str(tmp_path / "job.npy"), seq_len=30, volume=True, moving_average=[5],
                    color_up="#112233", mode="cpu", **settings)
    job = np.load(tmp_path / "job.npy")
    assert job.shape == (len(dataset), 80, 120, 3) and dataset[3].shape == (80, 120, 3)
    np.testing.assert_array_equal(dataset.get_batch(range(len(dataset))), job)
    assert (job.reshape(-1, 3) == (0x11, 0x22, 0x33)).all(axis=1).any()
