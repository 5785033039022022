"""kiln.quality and kiln.preprocess from Python, checked against numpy references."""
import numpy as np
import pytest

import kiln


def laplacian_reflect101(gray):
    g = np.pad(gray.astype(np.int64), 1, mode="reflect")  # numpy's "reflect" is OpenCV's BORDER_REFLECT_101
    return g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:] - 4 * g[1:-1, 1:-1]


def sobel_magnitude_reflect101(gray):
    g = np.pad(gray.astype(np.float64), 1, mode="reflect")
    gx = (g[:-2, 2:] + 2 * g[1:-1, 2:] + g[2:, 2:]) - (g[:-2, :-2] + 2 * g[1:-1, :-2] + g[2:, :-2])
    gy = (g[2:, :-2] + 2 * g[2:, 1:-1] + g[2:, 2:]) - (g[:-2, :-2] + 2 * g[:-2, 1:-1] + g[:-2, 2:])
    return np.sqrt(gx * gx + gy * gy)


def gray_of(rgb):
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    return ((r * 9798 + g * 19235 + b * 3735 + (1 << 14)) >> 15).astype(np.uint8)  # OpenCV 4 cvtColor


def test_quality_matches_numpy_on_gray_and_rgb():
    rng = np.random.default_rng(3)
    gray = rng.integers(0, 256, size=(37, 53), dtype=np.uint8)
    rgb = rng.integers(0, 256, size=(20, 31, 3), dtype=np.uint8)
    out = kiln.quality([gray, rgb], mode="cpu")
    for i, g in enumerate([gray, gray_of(rgb)]):
        lap = laplacian_reflect101(g)
        assert out["blur"][i] == pytest.approx(lap.var(), rel=1e-9)
        assert out["brightness"][i] == pytest.approx(g.mean(), rel=1e-9)
        assert out["contrast"][i] == pytest.approx(g.std(), rel=1e-9)
        assert out["sharpness"][i] == pytest.approx(sobel_magnitude_reflect101(g).mean(), rel=1e-6)


def test_quality_flat_image_fails_with_reasons():
    flat = np.full((64, 64, 3), 128, dtype=np.uint8)
    out = kiln.quality(flat)
    assert out["blur"][0] == 0 and out["sharpness"][0] == 0 and out["contrast"][0] == 0
    assert out["brightness"][0] == pytest.approx(128)
    assert not out["passed"][0]
    joined = " ".join(out["reasons"][0])
    assert "blur" in joined and "sharpness" in joined
    # score: 0.2 (brightness centred) + 0.1 (no occlusion)
    assert out["score"][0] == pytest.approx(0.3)


def test_quality_stack_and_thresholds():
    rng = np.random.default_rng(5)
    stack = rng.integers(0, 256, size=(4, 24, 24, 3), dtype=np.uint8)
    out = kiln.quality(stack, min_blur=0, min_sharpness=0, min_brightness=0, max_brightness=255)
    assert out["passed"].tolist() == [True] * 4
    assert out["backend"] in ("cpu", "opencl", "cuda")


def test_quality_rejects_bad_input():
    with pytest.raises(ValueError):
        kiln.quality(np.zeros((8, 8), dtype=np.float32))
    with pytest.raises(ValueError):
        kiln.quality(np.zeros((8, 8, 5), dtype=np.uint8))


def test_preprocess_identity_size_is_the_normalized_image():
    rng = np.random.default_rng(9)
    img = rng.integers(0, 256, size=(5, 7, 3), dtype=np.uint8)
    out = kiln.preprocess(img, height=5, width=7, mean=[0.0], std=[1.0], mode="cpu")
    assert out.shape == (1, 3, 5, 7) and out.dtype == np.float32
    expected = np.transpose(img.astype(np.float32) / 255.0, (2, 0, 1))
    np.testing.assert_allclose(out[0], expected, rtol=0, atol=1e-6)


def test_preprocess_imagenet_defaults_layouts_and_half():
    rng = np.random.default_rng(11)
    images = [rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8) for h, w in [(40, 60), (33, 17)]]
    chw = kiln.preprocess(images, height=16, width=24)
    hwc = kiln.preprocess(images, height=16, width=24, layout="hwc")
    half = kiln.preprocess(images, height=16, width=24, dtype="float16")
    assert chw.shape == (2, 3, 16, 24) and hwc.shape == (2, 16, 24, 3) and half.dtype == np.float16
    np.testing.assert_array_equal(np.transpose(hwc, (0, 3, 1, 2)), chw)
    np.testing.assert_array_equal(half, chw.astype(np.float16))
    # A flat image stays flat: (v / 255 - mean) / std per channel.
    flat = np.full((9, 9, 3), 200, dtype=np.uint8)
    out = kiln.preprocess(flat, height=4, width=4)
    mean = np.array([0.485, 0.456, 0.406], dtype=np.float32)
    std = np.array([0.229, 0.224, 0.225], dtype=np.float32)
    np.testing.assert_allclose(out[0, :, 0, 0], (200 / 255 - mean) / std, rtol=1e-5)


def test_preprocess_rejects_bad_arguments():
    img = np.zeros((8, 8, 3), dtype=np.uint8)
    with pytest.raises(ValueError):
        kiln.preprocess(img, height=0, width=8)
    with pytest.raises(ValueError):
        kiln.preprocess(img, height=8, width=8, layout="nchw")
    with pytest.raises(ValueError):
        kiln.preprocess(img, height=8, width=8, interp="lanczos")


def test_files_run_the_same_jobs_as_the_command_line(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(4)
    images = [rng.integers(0, 256, size=(20 + i, 30, 3), dtype=np.uint8) for i in range(3)]
    for i, img in enumerate(images):
        Image.fromarray(img).save(tmp_path / f"{i}.png")
    (tmp_path / "3.png").write_bytes(b"not a png")

    quality = kiln.quality(str(tmp_path), mode="cpu", batch_size=2)
    assert [n.rsplit("/", 1)[1] for n in quality["names"]] == ["0.png", "1.png", "2.png", "3.png"]
    assert quality["errors"][:3] == [None] * 3 and "3.png" in quality["errors"][3]
    assert np.isnan(quality["blur"][3]) and not quality["passed"][3]
    np.testing.assert_array_equal(quality["blur"][:3], kiln.quality(images, mode="cpu")["blur"])

    summary = kiln.preprocess([str(tmp_path / f"{i}.png") for i in range(4)], width=8, height=6, mode="cpu",
                              batch_size=2)
    assert summary["written"] == 3 and summary["unreadable"] == 1
    np.testing.assert_array_equal(summary["array"], kiln.preprocess(images, width=8, height=6, mode="cpu"))
    out = tmp_path / "t.npy"
    summary = kiln.preprocess(str(tmp_path), width=8, height=6, output=str(out), mode="cpu")
    assert summary["output"] == str(out) and np.load(out).shape == (3, 3, 6, 8)
