"""kiln infer: packaged models over real photographs, outputs in input order, corrupt inputs skipped, every output
format readable by numpy / h5py, clear errors that leave existing outputs alone."""
import shutil

import h5py
import numpy as np
import pytest

from conftest import run_kiln
from integer_model import integer_model

PHOTOS = ["/usr/lib/python3/dist-packages/skimage/data/astronaut.png",
          "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"]


@pytest.fixture
def photos(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    for i, photo in enumerate(PHOTOS):
        shutil.copy(photo, folder / f"{i}_{photo.rsplit('/', 1)[1]}")
    (folder / "2_corrupt.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    return folder


def test_selfie_masks_in_input_order_with_the_corrupt_file_skipped(photos, tmp_path):
    out = tmp_path / "masks.npz"
    result = run_kiln("infer", "--model", "selfie", photos, "-o", out, "-q")
    assert "Inferred 2 images, 1 unreadable" in result.stdout
    assert "2_corrupt.jpg" in result.stderr
    if "Provider: cpu" in result.stdout:  # device memory only where the CUDA provider reads it
        assert "model input: host" in result.stdout
    data = np.load(out)
    assert sorted(data.files) == ["mask", "paths"]
    assert [p.rsplit("/", 1)[1] for p in data["paths"]] == ["0_astronaut.png", "1_grace_hopper.jpg"]
    mask = data["mask"]
    assert mask.shape == (2, 1, 256, 256) and mask.dtype == np.float32
    # Person share of each portrait, as OpenCV DNN measures it on the same photos: 0.54 and 0.58.
    assert (mask[0] > 0.5).mean() == pytest.approx(0.54, abs=0.03)
    assert (mask[1] > 0.5).mean() == pytest.approx(0.58, abs=0.03)


def test_every_output_by_name_in_h5_and_the_first_in_npy(photos, tmp_path):
    run_kiln("infer", "--model", "fr-detect", photos, "-o", tmp_path / "d.h5", "--mode", "cpu", "-q")
    with h5py.File(tmp_path / "d.h5") as f:
        assert set(f) == {"scores", "boxes", "paths"}
        assert f["scores"].shape == (2, 4420, 2) and f["boxes"].shape == (2, 4420, 4)
        assert f.attrs["model"] == "fr-detect"
        scores = f["scores"][()]
    assert (scores[:, :, 1].max(axis=1) > 0.99).all()  # one face in each photo
    run_kiln("infer", "--model", "fr-detect", photos, "-o", tmp_path / "d.npy", "--mode", "cpu", "-q")
    first = np.load(tmp_path / "d.npy")
    np.testing.assert_array_equal(first, scores)
    assert (tmp_path / "d.paths.txt").read_text().count("\n") == 2


def test_batch_size_does_not_change_the_rows(photos, tmp_path):
    for size in (1, 3):
        run_kiln("infer", "--model", "fr-embed", photos, photos, "-o", tmp_path / f"e{size}.npy", "--batch-size",
                 size, "--mode", "cpu", "-q")
    one, three = np.load(tmp_path / "e1.npy"), np.load(tmp_path / "e3.npy")
    assert one.shape == (4, 512)
    np.testing.assert_allclose(one, three, atol=2e-4)
    np.testing.assert_allclose(one[0], one[2], atol=2e-4)  # the same photo twice


def test_a_bad_model_is_a_clear_error_and_the_output_stays(photos, tmp_path):
    out = tmp_path / "kept.npy"
    out.write_bytes(b"earlier results")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    result = run_kiln("infer", "--model", bad, photos, "-o", out, check=False)
    assert result.returncode == 2 and str(bad) in result.stderr
    unknown = run_kiln("infer", "--model", "nope", photos, "-o", out, check=False)
    assert unknown.returncode == 2 and "selfie" in unknown.stderr
    assert out.read_bytes() == b"earlier results"


def test_a_plain_onnx_file_takes_its_size_and_layout_from_the_model(photos, tmp_path):
    models = {m["name"]: m for m in __import__("json").loads(run_kiln("models", "--json").stdout)}
    result = run_kiln("infer", "--model", models["fr-embed"]["file"], photos, "-o", tmp_path / "e.npy",
                      "--preprocess-from", "flags", "--scale", "1", "--mean", "127", "--std", "128", "--mode", "cpu",
                      "-q")
    assert "Input: (3, 112, 112) per image" in result.stdout
    run_kiln("infer", "--model", "fr-embed", photos, "-o", tmp_path / "p.npy", "--mode", "cpu", "-q")
    np.testing.assert_allclose(np.load(tmp_path / "e.npy"), np.load(tmp_path / "p.npy"), atol=1e-5)


def test_integer_outputs_keep_their_type_and_every_digit(photos, tmp_path):
    model = tmp_path / "integers.onnx"
    integer_model(model)
    flags = ["--preprocess-from", "flags", "--scale", "1", "--mean", "0", "--std", "1", "--mode", "cpu", "-q"]
    run_kiln("infer", "--model", model, photos, "-o", tmp_path / "i.npz", *flags)
    arrays = np.load(tmp_path / "i.npz")
    codes, channel, mean = arrays["codes"], arrays["channel"], arrays["mean"]
    assert codes.dtype == np.int64 and channel.dtype == np.int32 and mean.dtype == np.float32
    np.testing.assert_array_equal(codes, (mean * np.float32(1e7)).astype(np.int64) + 1)
    assert (codes.astype(np.float32).astype(np.int64) != codes).any()  # float32 would have lost digits
    np.testing.assert_array_equal(channel, mean.argmax(axis=1))
    run_kiln("infer", "--model", model, photos, "-o", tmp_path / "i.h5", *flags)
    with h5py.File(tmp_path / "i.h5") as f:
        assert f["codes"].dtype == np.int64 and f["channel"].dtype == np.int32
        np.testing.assert_array_equal(f["codes"][()], codes)
        np.testing.assert_array_equal(f["channel"][()], channel)
    run_kiln("infer", "--model", model, photos, "-o", tmp_path / "i.npy", *flags)  # the first output
    np.testing.assert_array_equal(np.load(tmp_path / "i.npy"), codes)


def test_on_the_cpu_provider_the_model_takes_at_most_eight_inputs_a_run_with_the_same_outputs(tmp_path):
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(20):
        shutil.copy(PHOTOS[i % len(PHOTOS)], folder / f"{i:02d}_{PHOTOS[i % len(PHOTOS)].rsplit('/', 1)[1]}")
    outputs = {}
    for batch in (64, 3):
        result = run_kiln("infer", "--model", "fr-embed", folder, "-o", tmp_path / f"b{batch}.npy", "--mode", "cpu",
                          "--batch-size", batch)
        most = min(batch, 8)
        assert f"at most {most} per model run (the CPU provider's most" in result.stdout
        outputs[batch] = np.load(tmp_path / f"b{batch}.npy")
    assert outputs[64].shape == (20, 512)
    np.testing.assert_allclose(outputs[64], outputs[3], atol=1e-5)
