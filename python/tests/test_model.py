"""kiln.Model: packaged models by name or file, numpy batches in, {name: array} out, batch == singles, errors raised
as kiln exceptions, and the GIL released while a model runs."""
import threading
import time

import numpy as np
import pytest

import kiln

pytestmark = pytest.mark.skipif(kiln.Model is None, reason="kiln built without ONNX Runtime")


def test_models_lists_the_packaged_models():
    names = [m["name"] for m in kiln.models()]
    assert names == ["selfie", "blazeface-front", "blazeface-back", "fr-detect", "fr-embed"]


def test_a_packaged_model_by_name_describes_itself_and_runs():
    model = kiln.Model("fr-embed", device="cpu", threads=2)
    assert model.inputs == [{"name": "input", "dtype": "float32", "shape": ["N", 3, 112, 112]}]
    assert model.outputs[0]["name"] == "output"
    assert model.report["provider"] == "cpu" and model.report["batch_dynamic"]
    batch = np.random.default_rng(0).uniform(-1, 1, (3, 3, 112, 112)).astype(np.float32)
    out = model(batch)
    assert list(out) == ["output"] and out["output"].shape == (3, 512)
    for i in range(3):
        np.testing.assert_allclose(model(batch[i:i + 1])["output"][0], out["output"][i], atol=2e-4)


def test_a_file_and_float64_input_work_too():
    path = next(m["file"] for m in kiln.models() if m["name"] == "selfie")
    model = kiln.Model(path, device="cpu")
    out = model(np.zeros((1, 3, 256, 256)))  # float64: converted
    assert out["mask"].shape == (1, 1, 256, 256) and out["mask"].dtype == np.float32


def test_errors_are_kiln_exceptions(tmp_path):
    with pytest.raises(kiln.KilnValueError, match="nope"):
        kiln.Model("nope")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"junk")
    with pytest.raises(kiln.KilnValueError, match="bad.onnx"):
        kiln.Model(str(bad))
    model = kiln.Model("fr-embed", device="cpu")
    with pytest.raises(kiln.KilnValueError, match="N x 3 x 112 x 112"):
        model(np.zeros((3, 112, 112), np.float32))


def test_the_gil_is_released_while_the_model_runs():
    model = kiln.Model("selfie", device="cpu", threads=1)
    batch = np.zeros((8, 3, 256, 256), np.float32)
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    thread = threading.Thread(target=count)
    thread.start()
    started = time.perf_counter()
    model(batch)
    elapsed = time.perf_counter() - started
    stop.set()
    thread.join()
    during = [t for t in ticks if started < t < started + elapsed]
    assert elapsed > 0.02 and len(during) >= 5  # the other thread kept running


PHOTO = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"


@pytest.mark.skipif(kiln.model_convert is None, reason="kiln built without libonnx")
def test_model_convert_and_quantize_write_checked_copies(tmp_path):
    fp16 = kiln.model_convert("selfie", [PHOTO], output=str(tmp_path / "s16.onnx"), threads=1, seconds=0.05)
    assert fp16["precision"] == "fp16" and fp16["frames"] == 1 and not fp16["random_inputs"]
    assert fp16["bytes_after"] < 0.7 * fp16["bytes_before"] and fp16["fp16"]["converted"] > 0
    assert fp16["compare"]["mask_iou"]["mean"] > 0.99
    assert kiln.Model(fp16["output"], device="cpu").outputs[0]["name"] == "mask"
    int8 = kiln.model_quantize("selfie", [PHOTO], output=str(tmp_path / "s8.onnx"), threads=1, seconds=0.05,
                               method="percentile", percentile=99.9)
    assert int8["precision"] == "int8" and int8["int8"]["quantized_nodes"] > 0
    assert (tmp_path / "s8.onnx").stat().st_size == int8["bytes_after"]
    assert int8["int8"]["head_nodes"] == 4  # the output head stays float32 ...
    whole = kiln.model_quantize("selfie", [PHOTO], output=str(tmp_path / "s8h.onnx"), threads=1, seconds=0.05,
                                quantize_head=True)
    assert whole["int8"]["head_nodes"] == 0 and "Sigmoid" not in whole["int8"]["float_op_types"]  # ... unless asked


@pytest.mark.skipif(kiln.model_convert is None, reason="kiln built without libonnx")
def test_model_precision_settings_are_checked_before_anything_is_written(tmp_path):
    out = tmp_path / "x.onnx"
    with pytest.raises(kiln.KilnValueError, match="activations"):
        kiln.model_quantize("selfie", [PHOTO], output=str(out), activations="int16")
    with pytest.raises(TypeError):
        kiln.model_convert("selfie", output=str(out), method="minmax")  # an int8 setting
    with pytest.raises(kiln.KilnValueError, match="calibration frames"):
        kiln.model_quantize("selfie", [], output=str(out))
    assert not out.exists()


def test_integer_outputs_come_back_in_their_type(tmp_path):
    from integer_model import integer_model  # tests/common, on the path through conftest.py
    path = tmp_path / "integers.onnx"
    integer_model(path)
    batch = np.random.default_rng(2).uniform(0, 255, size=(2, 3, 16, 16)).astype(np.float32)
    out = kiln.Model(str(path), device="cpu")(batch)
    assert out["codes"].dtype == np.int64 and out["channel"].dtype == np.int32 and out["mean"].dtype == np.float32
    np.testing.assert_array_equal(out["codes"], (out["mean"] * np.float32(1e7)).astype(np.int64) + 1)
    np.testing.assert_array_equal(out["channel"], out["mean"].argmax(axis=1))


def test_a_dlpack_tensor_is_read_in_place_and_bad_ones_are_refused():
    torch = pytest.importorskip("torch", reason="needs torch (not installed on this host)")
    model = kiln.Model("fr-embed", device="cpu", threads=2)
    batch = np.random.default_rng(1).uniform(-1, 1, (2, 3, 112, 112)).astype(np.float32)
    np.testing.assert_array_equal(model(torch.from_numpy(batch))["output"], model(batch)["output"])
    with pytest.raises(kiln.KilnValueError, match="C-contiguous"):
        model(torch.from_numpy(batch).permute(0, 1, 3, 2))
    with pytest.raises(kiln.KilnValueError, match="float32"):
        model(torch.from_numpy(batch.astype(np.float64)))


def test_a_cuda_tensor_is_read_on_the_device_by_the_cuda_provider():
    if not any(b["name"] == "cuda" and b["available"] for b in kiln.devices()):
        pytest.skip("no CUDA device: CUDA tensors into kiln.Model are checked on the GPU only")
    try:
        gpu = kiln.Model("fr-embed", device="gpu")
    except kiln.KilnDeviceError as e:
        pytest.skip(f"no CUDA provider for ONNX Runtime here: {e}")
    cpu = kiln.Model("fr-embed", device="cpu", threads=2)
    batch = np.random.default_rng(2).uniform(-1, 1, (4, 3, 112, 112)).astype(np.float32)
    want = cpu(batch)["output"]
    # The first batch of this size teaches the session the outputs' shapes (bound on the host, copied up); the second
    # is written in device memory by the provider. Both come back as device arrays.
    for call in range(2):
        out = gpu(kiln.to_device(batch))["output"]
        assert isinstance(out, kiln.DeviceArray) and out.shape == want.shape and out.dtype == np.float32, out
        got = out.numpy()
        cosine = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
        assert cosine.min() >= 0.999, (call, cosine)  # the CUDA provider convolves in TF32
    assert gpu.report["device_output_runs"] == 1, gpu.report
    assert gpu.report["device_input_runs"] == 2, gpu.report
    with pytest.raises(kiln.KilnDeviceError, match="CUDA provider"):
        cpu(kiln.to_device(batch))
