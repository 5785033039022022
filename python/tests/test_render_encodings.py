"""The encodings (style gasf, gadf, mtf, rp) from Python: kiln.render, kiln.render_windows, kiln.ChartDataset and
kiln.render_job give the same images, seq_len x seq_len unless a size is given, constant windows skipped."""
import numpy as np

import kiln

SEQ = 20


def closes():
    x = (50 + np.cumsum(np.random.default_rng(2).normal(0, 1, 120))).astype(np.float32)
    x[40:65] = x[40]  # 6 constant windows of 20
    return x


def test_render_dataset_and_job_agree(tmp_path):
    x = closes()
    starts = [s for s in range(len(x) - SEQ + 1) if np.ptp(x[s:s + SEQ]) > 0]
    summary = kiln.render_job(x, output=str(tmp_path / "job.npy"), seq_len=SEQ, style="mtf", mtf_bins=6, mode="cpu")
    job = np.load(tmp_path / "job.npy")
    assert summary["images"] == len(starts) == len(x) - SEQ + 1 - 6 and job.shape == (len(starts), SEQ, SEQ)
    direct = kiln.render(np.stack([x[s:s + SEQ] for s in starts]), style="mtf", mtf_bins=6, mode="cpu")
    np.testing.assert_array_equal(direct, job)
    views = kiln.render_windows(x, np.array(starts, np.int64), SEQ, style="mtf", mtf_bins=6, mode="cpu")
    np.testing.assert_array_equal(views, job)
    dataset = kiln.ChartDataset(x, seq_len=SEQ, style="mtf", mtf_bins=6)
    assert len(dataset) == len(starts) and dataset.skipped == 6
    np.testing.assert_array_equal(dataset[3], job[3])


def test_size_dtype_and_threshold():
    x = closes()[:SEQ]
    gasf = kiln.render(x[None], style="gasf", width=40, height=30, dtype="float32", mode="cpu")
    assert gasf.shape == (1, 30, 40) and gasf.dtype == np.float32 and 0 <= gasf.min() and gasf.max() <= 1
    # The diagonal of a GASF is cos(2 phi_i) = 2 x~_i^2 - 1: white where the window is at its min or max.
    square = kiln.render(x[None], style="gasf", mode="cpu")[0]
    assert square.shape == (SEQ, SEQ) and square[np.argmax(x), np.argmax(x)] == 255
    rp = kiln.render(x[None], style="rp", rp_threshold=0.5, mode="cpu")[0]
    np.testing.assert_array_equal(rp, np.where(np.abs(x[:, None] - x[None, :]) <= 0.5, 255, 0))
