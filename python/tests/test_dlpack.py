"""DLPack: images of other array libraries read in place (a PyTorch tensor, strided or not), kiln.DeviceArray
in and out of the CUDA backend, kiln.preprocess on CUDA images returning a device array that equals the
CPU's result, and kiln.quality measuring CUDA images in place with the CPU's metrics. The CUDA tests skip visibly here and fail on the GPU machine (KILN_REQUIRE_GPU=1)."""
import numpy as np
import pytest

import kiln

try:  # PyTorch gives the host and strided tensors; the device tests need only kiln.DeviceArray
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch (not installed on this host): host tensors")

SETTINGS = dict(height=64, width=96, letterbox=True)


def cuda_here():
    return any(b["name"] == "cuda" and b["available"] for b in kiln.devices())


def photos(n=3, seed=5):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(n, 120, 200, 3), dtype=np.uint8)


@needs_torch
def test_host_tensor_through_dlpack_equals_the_numpy_array():
    images = photos()
    expected = kiln.preprocess(images, mode="cpu", **SETTINGS)
    got = kiln.preprocess(torch.from_numpy(images), mode="cpu", **SETTINGS)
    np.testing.assert_array_equal(got, expected)


@needs_torch
def test_strided_host_tensor_is_read_at_its_strides():
    images = photos()
    crop = torch.from_numpy(images)[:, 10:100, 30:170]  # rows 200 pixels apart, 140 wide
    assert not crop.is_contiguous()
    expected = kiln.preprocess(np.ascontiguousarray(images[:, 10:100, 30:170]), mode="cpu", **SETTINGS)
    np.testing.assert_array_equal(kiln.preprocess(crop, mode="cpu", **SETTINGS), expected)
    single = torch.from_numpy(images[1])  # (H, W, C)
    np.testing.assert_array_equal(kiln.preprocess(single, mode="cpu", **SETTINGS),
                                  kiln.preprocess(images[1], mode="cpu", **SETTINGS))


QUALITY_COLUMNS = ("blur", "brightness", "contrast", "sharpness", "score")


@needs_torch
def test_quality_of_a_host_tensor_equals_the_numpy_arrays():
    images = photos()
    expected = kiln.quality(images, mode="cpu")
    got = kiln.quality(torch.from_numpy(images)[:, 5:110, 7:190], mode="cpu")
    want = kiln.quality(np.ascontiguousarray(images[:, 5:110, 7:190]), mode="cpu")
    for column in QUALITY_COLUMNS:
        np.testing.assert_array_equal(got[column], want[column])
    assert list(got["passed"]) == list(want["passed"]) and len(expected["names"]) == 3


@needs_torch
def test_unreadable_tensors_are_refused_clearly():
    with pytest.raises(kiln.KilnValueError, match="uint8"):
        kiln.preprocess(torch.zeros((2, 8, 8, 3), dtype=torch.float32), **SETTINGS)
    with pytest.raises(kiln.KilnValueError, match="packed"):
        kiln.preprocess(torch.zeros((2, 3, 8, 8), dtype=torch.uint8).permute(0, 2, 3, 1), **SETTINGS)
    with pytest.raises(kiln.KilnValueError, match="channels"):
        kiln.preprocess(torch.zeros((2, 8, 8, 5), dtype=torch.uint8), **SETTINGS)


def test_without_cuda_device_arrays_say_why():
    if cuda_here():
        pytest.skip("this machine has the CUDA backend: the device tests below run instead")
    with pytest.raises(kiln.KilnDeviceError, match="device arrays need the CUDA backend"):
        kiln.to_device(photos())


@pytest.mark.skipif(not cuda_here(), reason="no CUDA device: device arrays are checked on the GPU only")
def test_device_array_round_trip_and_export():
    images = photos()
    d = kiln.to_device(images)
    assert isinstance(d, kiln.DeviceArray) and d.shape == images.shape and d.dtype == np.uint8
    assert d.device.startswith("cuda:") and d.__dlpack_device__()[0] == 2 and len(d) == 3
    np.testing.assert_array_equal(d.numpy(), images)
    # DLPack's arguments: the consumer's stream (None and 1: CUDA's legacy default stream, 2: per-thread, -1: none),
    # waited for when the consumer lets the tensor go; no copy, no other device.
    for stream in (None, 1, 2, -1):
        capsule = d.__dlpack__(stream=stream)
        assert type(capsule).__name__ == "PyCapsule"
        del capsule  # never consumed: its deleter runs here
    with pytest.raises(BufferError, match="copy=True"):
        d.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="DLPack device"):
        d.__dlpack__(dl_device=(1, 0))
    with pytest.raises(BufferError, match="stream 0"):
        d.__dlpack__(stream=0)
    assert type(d.__dlpack__(copy=False, dl_device=(2, int(d.device[5:])))).__name__ == "PyCapsule"
    # kiln as the consumer of its own array: its stream is waited for before it is destroyed
    np.testing.assert_array_equal(kiln.preprocess(d, **SETTINGS).numpy(),
                                  kiln.preprocess(images, mode="cpu", **SETTINGS))
    np.testing.assert_array_equal(d.numpy(), images)
    if torch is not None and torch.cuda.is_available():  # a CUDA build of PyTorch takes it without a copy
        t = torch.from_dlpack(d)
        assert t.is_cuda and t.data_ptr() == torch.from_dlpack(d).data_ptr()
        np.testing.assert_array_equal(t.cpu().numpy(), images)


@pytest.mark.skipif(not cuda_here(), reason="no CUDA device: device preprocess is checked on the GPU only")
@pytest.mark.parametrize("layout,dtype", [("chw", "float32"), ("hwc", "float16")])
def test_preprocess_on_cuda_images_stays_on_the_device_and_equals_the_cpu(layout, dtype):
    images = photos(4)
    expected = kiln.preprocess(images, mode="cpu", layout=layout, dtype=dtype, **SETTINGS)
    out = kiln.preprocess(kiln.to_device(images), layout=layout, dtype=dtype, **SETTINGS)
    assert isinstance(out, kiln.DeviceArray) and out.shape == expected.shape and out.dtype == expected.dtype
    np.testing.assert_array_equal(out.numpy(), expected)
    # A crop of a device array read at its strides, through another library's tensor where one is here.
    if torch is not None and torch.cuda.is_available():
        crop = torch.from_numpy(images).cuda()[:, 10:100, 30:170]
        want = kiln.preprocess(np.ascontiguousarray(images[:, 10:100, 30:170]), mode="cpu", layout=layout,
                               dtype=dtype, **SETTINGS)
        got = torch.from_dlpack(kiln.preprocess(crop, layout=layout, dtype=dtype, **SETTINGS))
        np.testing.assert_array_equal(got.cpu().numpy(), want)
    with pytest.raises(kiln.KilnValueError, match="mode='cpu'"):
        kiln.preprocess(kiln.to_device(images), mode="cpu", **SETTINGS)


@pytest.mark.skipif(not cuda_here(), reason="no CUDA device: quality of device images is checked on the GPU only")
def test_quality_of_cuda_images_is_measured_in_place_with_the_cpus_metrics():
    images = photos(4)
    expected = kiln.quality(images, mode="cpu")
    got = kiln.quality(kiln.to_device(images))
    assert got["backend"] == "cuda" and got["names"] == ["#0", "#1", "#2", "#3"]
    for column in QUALITY_COLUMNS:
        np.testing.assert_allclose(got[column], expected[column], rtol=1e-6)
    assert list(got["passed"]) == list(expected["passed"]) and got["reasons"] == expected["reasons"]
    if torch is not None and torch.cuda.is_available():  # a crop of a torch CUDA tensor, at its strides
        crop = torch.from_numpy(images).cuda()[:, 10:100, 30:170]
        want = kiln.quality(np.ascontiguousarray(images[:, 10:100, 30:170]), mode="cpu")
        np.testing.assert_allclose(kiln.quality(crop)["blur"], want["blur"], rtol=1e-6)
    with pytest.raises(kiln.KilnValueError, match="mode='cpu'"):
        kiln.quality(kiln.to_device(images), mode="cpu")
    with pytest.raises(kiln.KilnValueError, match="metrics only"):
        kiln.quality(kiln.to_device(images), json="q.jsonl")
