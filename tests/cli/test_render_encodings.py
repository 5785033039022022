"""kiln render --style gasf|gadf|mtf|rp: every image against the encodings computed here in float64 with numpy (the
way pyts computes them: arccos of the min-max rescaled window, numpy.percentile quantile bins less tied ones with
numpy.digitize(right=True),
the transition matrix, the pairwise distances), within one grey level; constant windows skipped and counted; the
same images in every output format, from shards merged, after a resume and on OpenCL (Python:
python/tests/test_render_encodings.py)."""
import json

import numpy as np
import pytest

from conftest import read_dataset, run_kiln

OPENCL = {"KILN_OPENCL_DEVICE_TYPE": "all"}
SEQ = 24


def closes(n=160, seed=5):
    """A float32 random walk with a flat stretch of 30 days (7 windows of 24 inside it are constant)."""
    rng = np.random.default_rng(seed)
    x = (100 + np.cumsum(rng.normal(0, 1, n))).astype(np.float32)
    x[60:90] = x[60]
    return x


def encode(x, style, bins=8, threshold=-1.0):
    """The n x n field's grey levels (float64) of one window: row i, column j."""
    x = x.astype(np.float64)
    lo, hi = x.min(), x.max()
    if style in ("gasf", "gadf"):
        phi = np.arccos(np.clip((2 * x - hi - lo) / (hi - lo), -1, 1))
        field = np.cos(phi[:, None] + phi[None, :]) if style == "gasf" else np.sin(phi[:, None] - phi[None, :])
        return (field + 1) * 127.5
    if style == "mtf":
        edges = np.percentile(x, np.linspace(0, 100, bins + 1)[1:-1])
        edges = edges[np.r_[~np.isclose(0, np.diff(edges), rtol=0, atol=1e-8), True]]  # pyts drops tied quantiles
        b = np.digitize(x, edges, right=True)
        w = np.zeros((bins, bins))
        np.add.at(w, (b[:-1], b[1:]), 1)
        sums = w.sum(axis=1, keepdims=True)
        w = np.divide(w, sums, out=np.zeros_like(w), where=sums > 0)
        return w[b[:, None], b[None, :]] * 255
    d = np.abs(x[:, None] - x[None, :])
    return np.where(d <= threshold, 255.0, 0.0) if threshold >= 0 else d / (hi - lo) * 255


def windows(x):
    starts = [s for s in range(len(x) - SEQ + 1) if x[s:s + SEQ].max() > x[s:s + SEQ].min()]
    return starts, len(x) - SEQ + 1 - len(starts)


@pytest.fixture(scope="module")
def series(tmp_path_factory):
    path = tmp_path_factory.mktemp("series") / "x.npy"
    np.save(path, closes())
    return path


@pytest.mark.parametrize("style,extra", [("gasf", {}), ("gadf", {}), ("mtf", {"bins": 5}), ("rp", {}),
                                         ("rp", {"threshold": 1.25})])
def test_every_image_matches_the_numpy_encoding(tmp_path, series, style, extra):
    args = ["--mtf-bins", extra.get("bins", 8), "--rp-threshold", extra.get("threshold", -1.0)]
    run_kiln("render", series, "-o", tmp_path / "e.h5", "--seq-len", SEQ, "--style", style, *args, "--mode", "cpu",
             "-q")
    data, attrs = read_dataset(tmp_path / "e.h5")
    images = data["images"]
    x = closes()
    starts, constant = windows(x)
    assert images.shape == (len(starts), SEQ, SEQ) and images.dtype == np.uint8
    assert attrs["skipped_windows"] == constant == 7
    for image, start in zip(images, starts):
        want = encode(x[start:start + SEQ], style, **extra)
        assert np.abs(image - want).max() <= 0.5 + 1e-3, f"start {start}"
    if style == "rp" and "threshold" in extra:
        assert set(np.unique(images)) == {0, 255}


def test_size_output_formats_resume_and_shards(tmp_path, series):
    job = ["render", series, "--seq-len", SEQ, "--style", "gasf", "--width", 48, "--height", 36, "--mode", "cpu",
           "-q"]
    run_kiln(*job, "-o", tmp_path / "whole.npy")
    whole = np.load(tmp_path / "whole.npy")
    assert whole.shape[1:] == (36, 48)
    # Nearest cells: pixel (r, c) shows cell ((2r + 1) n // 72, (2c + 1) n // 96) of the 24 x 24 field.
    rows, cols = (2 * np.arange(36) + 1) * SEQ // 72, (2 * np.arange(48) + 1) * SEQ // 96
    start = windows(closes())[0][0]
    field = encode(closes()[start:start + SEQ], "gasf")
    assert np.abs(whole[0] - field[rows][:, cols]).max() <= 0.5 + 1e-3

    run_kiln(*job, "-o", tmp_path / "png", "--format", "png")
    pngs = sorted((tmp_path / "png").glob("*.png"))
    assert len(pngs) == len(whole)
    run_kiln(*job, "-o", tmp_path / "w.h5")
    assert np.array_equal(read_dataset(tmp_path / "w.h5")[0]["images"], whole)
    run_kiln(*job, "-o", tmp_path / "w.h5", "--resume")
    assert np.array_equal(read_dataset(tmp_path / "w.h5")[0]["images"], whole)
    for i in range(2):
        run_kiln(*job, "-o", tmp_path / "pieces" / "p.h5", "--shard", f"{i}/2")
    run_kiln("merge", tmp_path / "pieces", "-o", tmp_path / "merged.h5", "--copy")
    assert np.array_equal(read_dataset(tmp_path / "merged.h5")[0]["images"], whole)
    # A resume with another encoding setting is refused: the settings are part of the output's identity.
    other = run_kiln(*job, "-o", tmp_path / "w.h5", "--resume", "--mtf-bins", 4, check=False)
    assert other.returncode != 0


def test_opencl_matches_the_cpu(tmp_path, series):
    backends = json.loads(run_kiln("devices", "--json", env=OPENCL).stdout)["backends"]
    if not any(b["name"] == "opencl" and b["available"] for b in backends):
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    for style in ("gasf", "mtf", "rp"):
        job = ["render", series, "--seq-len", SEQ, "--style", style, "-q"]
        run_kiln(*job, "-o", tmp_path / f"{style}_cpu.npy", "--mode", "cpu")
        result = run_kiln(*job[:-1], "-o", tmp_path / f"{style}_gpu.npy", "--mode", "gpu", env=OPENCL)
        assert "opencl" in result.stderr
        cpu, gpu = np.load(tmp_path / f"{style}_cpu.npy"), np.load(tmp_path / f"{style}_gpu.npy")
        assert np.abs(cpu.astype(int) - gpu).max() <= (1 if style == "gasf" else 0)


def test_config_file_names_the_same_settings(tmp_path, series):
    (tmp_path / "c.yaml").write_text("image:\n  style: mtf\n  mtf_bins: 4\n  seq_len: 16\n")
    run_kiln("render", series, "-o", tmp_path / "c.npy", "--config", tmp_path / "c.yaml", "--mode", "cpu", "-q")
    run_kiln("render", series, "-o", tmp_path / "a.npy", "--style", "mtf", "--mtf-bins", 4, "--seq-len", 16,
             "--mode", "cpu", "-q")
    config, args = np.load(tmp_path / "c.npy"), np.load(tmp_path / "a.npy")
    assert config.shape[1:] == (16, 16) and np.array_equal(config, args)
    assert len(np.unique(config)) > 2
