"""kiln serve's POST /v1/segment against the real binary: the mask of a real photo equals kiln segment's for the same
image, the alpha output keeps the photo's pixels, JSON carries the same mask, bad input (400, 415), concurrent
requests batched (fewer model runs in /metrics), and a server started without --segment says how to get it."""
import base64
import io
import shutil
import subprocess
import threading

import numpy as np
import pytest
from PIL import Image

from conftest import KILN
from serve_util import Server

ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>'

pytestmark = pytest.mark.skipif(
    "serve" not in subprocess.run([KILN, "--help"], capture_output=True, text=True).stdout
    or "built without" in subprocess.run([KILN, "serve", "--help"], capture_output=True, text=True).stdout
    or "without ONNX Runtime or FFmpeg" in subprocess.run([KILN, "segment", "--help"], capture_output=True,
                                                          text=True).stdout,
    reason="this kiln is built without ONNX Runtime, faiss, Boost.Beast or FFmpeg")


def photo_bytes():
    with open(ASTRONAUT, "rb") as f:
        return f.read()


def png_array(data):
    return np.array(Image.open(io.BytesIO(data)))


@pytest.fixture(scope="module")
def server():
    # A long queue delay: concurrent requests wait for each other and run as one batch.
    with Server("--segment", "--no-faces", "--max-queue-delay-us", 300000, "--max-batch", 8, "--mode", "cpu") as s:
        yield s


@pytest.fixture(scope="module")
def kiln_segment_mask(tmp_path_factory):
    """kiln segment's mask of the photo: its probabilities (npy, the frame's size) at the default threshold."""
    folder = tmp_path_factory.mktemp("segment")
    shots = folder / "shots"
    shots.mkdir()
    shutil.copy(ASTRONAUT, shots / "000.png")
    subprocess.run([KILN, "segment", str(shots), "-o", str(folder / "p.npy"), "--output", "npy", "--mode", "cpu", "-q"],
                   check=True, capture_output=True)
    probabilities = np.load(folder / "p.npy")
    assert probabilities.shape == (1, 512, 512)
    return np.where(probabilities[0].astype(np.float32) >= 0.5, 255, 0).astype(np.uint8)


def test_mask_equals_kiln_segments(server, kiln_segment_mask):
    status, headers, data = server.request("POST", "/v1/segment", photo_bytes())
    assert status == 200 and headers["content-type"] == "image/png"
    assert int(headers["kiln-batch-size"]) >= 1 and float(headers["kiln-queue-ms"]) >= 0
    mask = png_array(data)
    assert mask.shape == (512, 512) and mask.dtype == np.uint8  # 8-bit gray at the photo's size
    assert set(np.unique(mask)) <= {0, 255}
    assert 0.3 < (mask == 255).mean() < 0.8  # the astronaut fills much of the photo
    # The same model, preprocess, upsampling and threshold as kiln segment; probabilities within a rounding of the
    # threshold (npy holds float16) may fall either way.
    assert (mask == kiln_segment_mask).mean() >= 0.999


def test_alpha_keeps_the_photo_and_json_carries_the_same_mask(server):
    _, _, mask_png = server.request("POST", "/v1/segment", photo_bytes())
    mask = png_array(mask_png)
    status, headers, data = server.request("POST", "/v1/segment?output=alpha", photo_bytes())
    assert status == 200 and headers["content-type"] == "image/png"
    rgba = png_array(data)
    photo = np.array(Image.open(ASTRONAUT).convert("RGB"))
    assert rgba.shape == (512, 512, 4)
    assert np.array_equal(rgba[..., :3], photo) and np.array_equal(rgba[..., 3], mask)

    status, _, answer = server.json("POST", "/v1/segment?output=json", photo_bytes())
    assert status == 200
    assert set(answer) == {"width", "height", "mask_png_base64", "person_fraction", "processing_time_ms",
                           "batch_size", "queue_ms"}
    assert (answer["width"], answer["height"]) == (512, 512)
    from_json = png_array(base64.b64decode(answer["mask_png_base64"]))
    assert np.array_equal(from_json, mask)
    assert abs(answer["person_fraction"] - (mask == 255).mean()) < 1e-6
    assert answer["processing_time_ms"] > 0 and answer["batch_size"] >= 1 and answer["queue_ms"] >= 0


def test_bad_input(server):
    status, _, answer = server.json("POST", "/v1/segment", SVG)
    assert status == 415 and "SVG" in answer["error"]
    truncated = photo_bytes()[:2000]  # a PNG's header, not its pixels
    status, _, answer = server.json("POST", "/v1/segment", truncated)
    assert status == 400 and "could not be read" in answer["error"]
    status, _, answer = server.json("POST", "/v1/segment", b"")
    assert status == 400 and "empty" in answer["error"]
    status, _, answer = server.json("POST", "/v1/segment?output=webp", photo_bytes())
    assert status == 400 and "mask" in answer["error"]
    status, _, _ = server.json("GET", "/v1/segment")
    assert status == 405


def test_concurrent_requests_share_model_runs(server):
    runs_before = server.metric('kiln_serve_model_runs_total{model="segment"}')
    items_before = server.metric('kiln_serve_model_items_total{model="segment"}')
    results = []

    def post():
        status, headers, data = server.request("POST", "/v1/segment", photo_bytes())
        results.append((status, int(headers.get("kiln-batch-size", 0)), data))

    threads = [threading.Thread(target=post) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r[0] for r in results] == [200] * 6
    assert all(r[2] == results[0][2] for r in results)  # the same photo, the same mask, whatever its batch
    runs = server.metric('kiln_serve_model_runs_total{model="segment"}') - runs_before
    items = server.metric('kiln_serve_model_items_total{model="segment"}') - items_before
    assert items == 6 and runs < 6
    assert max(r[1] for r in results) > 1
    assert server.metric('kiln_serve_model_ready{model="segment"}') == 1
    assert server.json("GET", "/v2/health/ready")[0] == 200  # the segmentation model counts in readiness


def test_without_segment_the_answer_says_how():
    with Server("--no-faces") as s:
        status, _, answer = s.json("POST", "/v1/segment", photo_bytes())
        assert status == 404 and "--segment" in answer["error"]


def test_a_model_that_fails_to_load_makes_the_server_unready(tmp_path):
    with Server("--no-faces", "--segment", env={"KILN_MODELS": str(tmp_path)}) as s:  # no packaged models there
        status, _, answer = s.json("GET", "/v2/health/ready")
        assert status == 400 and answer["ready"] is False
        status, headers, answer = s.json("POST", "/v1/segment", photo_bytes())
        assert status == 503 and "segmentation model failed to load" in answer["error"]
        assert headers["retry-after"] == "1"
        assert s.metric('kiln_serve_model_ready{model="segment"}') == 0
