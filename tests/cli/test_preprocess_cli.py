"""kiln preprocess from the command line: shapes and dtypes (.npy, .h5), exact values on tiny images, skipped
inputs, the output appearing only when complete, usage errors."""
import os

import h5py
import numpy as np

from conftest import run_kiln
from test_quality_cli import noisy, write_png


def test_tiny_png_values_are_exact(tmp_path):
    px = np.array([[[0, 64, 255], [10, 20, 30]], [[255, 255, 255], [1, 2, 3]]], np.uint8)
    write_png(tmp_path / "t.png", px)
    out = tmp_path / "out.npy"
    run_kiln("preprocess", tmp_path / "t.png", "-o", out, "--width", 2, "--height", 2, "--mean", "0,0,0", "--std", "1,1,1",
             "--mode", "cpu")
    arr = np.load(out)
    assert arr.shape == (1, 3, 2, 2) and arr.dtype == np.float32
    want = px.astype(np.float32) * np.float32(1.0 / 255.0)
    np.testing.assert_array_equal(arr[0], want.transpose(2, 0, 1))
    assert (tmp_path / "out.paths.txt").read_text() == str(tmp_path / "t.png") + "\n"

    # HWC, BGR order, mean/std applied per output channel.
    run_kiln("preprocess", tmp_path / "t.png", "-o", out, "--width", 2, "--height", 2, "--layout", "hwc", "--bgr",
             "--scale", 1, "--mean", "1,2,3", "--std", "2,2,2")
    arr = np.load(out)
    assert arr.shape == (1, 2, 2, 3)
    want = (px[..., ::-1].astype(np.float32) - np.array([1, 2, 3], np.float32)) / np.float32(2)
    np.testing.assert_array_equal(arr[0], want)


def test_h5_f16_shapes_paths_and_attributes(tmp_path):
    images = tmp_path / "imgs"
    images.mkdir()
    for i in range(5):
        write_png(images / f"{i}.png", noisy(i, (20 + 3 * i, 30 + i, 3)))
    (images / "9_corrupt.png").write_bytes(b"\x89PNG\r\n\x1a\ngarbage")
    write_png(images / "gray.png", noisy(9, (10, 12)))  # gray decodes to RGB
    out = tmp_path / "out.h5"
    result = run_kiln("preprocess", images, "-o", out, "--width", 16, "--height", 8, "--dtype", "f16", "--batch-size", 2,
                      "--interp", "area", "--threads", 2)
    with h5py.File(out, "r") as f:
        data = f["images"][()]
        paths = [p.decode() if isinstance(p, bytes) else p for p in f["paths"][()]]
        attrs = dict(f.attrs)
    assert data.shape == (6, 3, 8, 16) and data.dtype == np.float16
    assert [os.path.basename(p) for p in paths] == ["0.png", "1.png", "2.png", "3.png", "4.png", "gray.png"]
    assert attrs["layout"] == "chw" and attrs["dtype"] == "float16" and attrs["interp"] == "area"
    np.testing.assert_allclose(attrs["mean"], [0.485, 0.456, 0.406], rtol=1e-6)
    assert attrs["skipped"] == 1
    assert np.isfinite(data).all()
    assert "9_corrupt.png" in result.stderr and "1 unreadable" in result.stdout
    # Gray inputs are replicated to three equal channels.
    g = data[5].astype(np.float32)
    mean = np.array([0.485, 0.456, 0.406], np.float32)[:, None, None]
    std = np.array([0.229, 0.224, 0.225], np.float32)[:, None, None]
    levels = g * std + mean
    np.testing.assert_allclose(levels[0], levels[1], atol=0.01)
    np.testing.assert_allclose(levels[1], levels[2], atol=0.01)

    # f16 values are the f32 values rounded to half precision.
    out32 = tmp_path / "out32.h5"
    run_kiln("preprocess", images, "-o", out32, "--width", 16, "--height", 8, "--interp", "area")
    with h5py.File(out32, "r") as f:
        data32 = f["images"][()]
    np.testing.assert_array_equal(data, data32.astype(np.float16))


def test_letterbox_and_resize_shapes(tmp_path):
    write_png(tmp_path / "wide.png", np.full((10, 40, 3), 200, np.uint8))
    out = tmp_path / "lb.npy"
    run_kiln("preprocess", tmp_path / "wide.png", "-o", out, "--width", 20, "--height", 20, "--letterbox", "--pad", 0,
             "--mean", "0", "--std", "1", "--scale", 1, "--interp", "nearest")
    arr = np.load(out)[0]
    assert arr.shape == (3, 20, 20)
    assert arr[:, 0, :].max() == 0 and arr[:, 10, :].min() == 200  # padded rows at the top, image in the middle


def test_errors_usage_and_no_partial_output(tmp_path):
    write_png(tmp_path / "a.png", noisy(1))
    out = tmp_path / "out.npy"
    for width in ("12y", "0", "x", "-3", "40000"):
        result = run_kiln("preprocess", tmp_path / "a.png", "-o", out, "--width", width, "--height", 5, check=False)
        assert result.returncode == 2, width
        assert "--width" in result.stderr, result.stderr
    result = run_kiln("preprocess", tmp_path / "a.png", "-o", out, "--width", 5, check=False)
    assert result.returncode != 0 and "--height" in result.stderr
    result = run_kiln("preprocess", tmp_path / "a.png", "-o", tmp_path / "out.txt", "--width", 4, "--height", 4, check=False)
    assert result.returncode == 2 and ".npy" in result.stderr
    result = run_kiln("preprocess", tmp_path / "a.png", "-o", out, "--width", 4, "--height", 4, "--mean", "1,2", check=False)
    assert result.returncode == 2 and "--mean" in result.stderr
    result = run_kiln("preprocess", tmp_path / "a.png", "-o", out, "--width", 4, "--height", 4, "--layout", "nhwc", check=False)
    assert result.returncode == 2
    # Nothing readable: no output file, and no temporary left behind.
    (tmp_path / "bad.png").write_bytes(b"nope")
    result = run_kiln("preprocess", tmp_path / "bad.png", "-o", out, "--width", 4, "--height", 4, check=False)
    assert result.returncode != 0 and "could be read" in result.stderr
    assert sorted(os.listdir(tmp_path)) == ["a.png", "bad.png"]
    # An existing output is replaced only by a complete new one.
    run_kiln("preprocess", tmp_path / "a.png", "-o", out, "--width", 4, "--height", 4)
    assert np.load(out).shape == (1, 3, 4, 4)
    run_kiln("preprocess", tmp_path / "bad.png", "-o", out, "--width", 4, "--height", 4, check=False)
    assert np.load(out).shape == (1, 3, 4, 4)


def test_mode_and_environment(tmp_path):
    write_png(tmp_path / "a.png", noisy(1))
    out = tmp_path / "o.npy"
    result = run_kiln("preprocess", tmp_path / "a.png", "-o", out, "--width", 4, "--height", 4,
                      env={"IMAGE_PROCESSING_GPU": "0"})
    assert "Backend: cpu" in result.stdout
    result = run_kiln("preprocess", tmp_path / "a.png", "-o", out, "--width", 4, "--height", 4, check=False,
                      env={"IMAGE_PROCESSING_GPU": "perhaps"})
    assert result.returncode == 2 and "IMAGE_PROCESSING_GPU" in result.stderr
