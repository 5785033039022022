"""kiln.Client against the real `kiln serve`: the same faces and model outputs as the in-process kiln.faces and
kiln.Model, from bytes, paths and arrays, one at a time, batched, and from asyncio; refusals with their reasons."""
import asyncio
import os

import numpy as np
import pytest

from conftest import KILN
from serve_util import Server, kiln_module

HOPPER = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"
ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
TOKEN = "client-test-token"


def faces_kiln():
    return kiln_module("faces")


@pytest.fixture(scope="module")
def server():
    with Server("--models", "fr-embed", "--mode", "cpu", "--token", TOKEN, "-q") as s:
        yield s


@pytest.fixture(scope="module")
def client(server):
    kiln = faces_kiln()
    with kiln.Client(f"http://127.0.0.1:{server.port}", token=TOKEN) as c:
        yield c


def same_faces(remote, local):
    assert len(remote) == len(local) >= 1
    for r, l in zip(remote, local):
        assert np.allclose(r["bbox"], l["bbox"], atol=1.0), (r["bbox"], l["bbox"])
        assert float(np.dot(r["embedding"], l["embedding"])) > 0.999
        assert r["landmarks"].shape == l["landmarks"].shape == (6, 2)
        assert r["accepted"] == l["accepted"] and r["reasons"] == l["reasons"]
        assert abs(r["det_score"] - l["det_score"]) < 1e-4


def test_faces_equal_the_in_process_ones_from_a_path_bytes_and_an_array(client):
    kiln = faces_kiln()
    local = kiln.faces.detect_and_embed(HOPPER, min_score=0.5)
    same_faces(client.detect_and_embed(HOPPER), local)
    with open(HOPPER, "rb") as f:
        same_faces(client.detect_and_embed(f.read()), local)
    import cv2  # noqa: PLC0415
    rgb = cv2.cvtColor(cv2.imread(ASTRONAUT), cv2.COLOR_BGR2RGB)  # a PNG: the array is the file's exact pixels
    same_faces(client.detect_and_embed(rgb), kiln.faces.detect_and_embed(ASTRONAUT, min_score=0.5))


def test_batch_and_async_give_each_images_faces_and_the_refused_one_its_reason(client):
    kiln = faces_kiln()
    photos = [HOPPER, ASTRONAUT] * 3
    batch = client.detect_and_embed_batch(photos)
    for photo, faces in zip(photos, batch):
        same_faces(faces, kiln.faces.detect_and_embed(photo, min_score=0.5))
    mixed = client.detect_and_embed_batch([HOPPER, b"<svg xmlns='http://www.w3.org/2000/svg'/>"],
                                          return_exceptions=True)
    assert len(mixed[0]) == 1
    assert isinstance(mixed[1], kiln.KilnValueError) and isinstance(mixed[1], ValueError)
    assert "415" in str(mixed[1]) and "SVG" in str(mixed[1])
    with pytest.raises(kiln.KilnValueError, match="SVG"):
        client.detect_and_embed_batch([b"<svg xmlns='http://www.w3.org/2000/svg'/>"])
    faces = asyncio.run(client.detect_and_embed_batch_async([HOPPER, ASTRONAUT]))
    same_faces(faces[0], batch[0])
    same_faces(faces[1], batch[1])


def test_a_served_model_answers_as_kiln_model_does(client):
    kiln = faces_kiln()
    remote = client.model("fr-embed")
    assert remote.inputs[0]["datatype"] == "FP32" and remote.inputs[0]["shape"][1:] == [3, 112, 112]
    x = np.random.default_rng(53).standard_normal((3, 3, 112, 112)).astype(np.float32)
    got = remote(x)
    expected = kiln.Model("fr-embed", "cpu")(x)
    assert set(got) == set(expected)
    for name, value in expected.items():
        assert got[name].shape == value.shape and got[name].dtype == value.dtype
        assert np.allclose(got[name], value, atol=1e-5)
    assert "fr-embed" in client.models()
    with pytest.raises(kiln.KilnValueError, match="404"):
        client.model("no-such-model")


def test_without_the_token_the_server_refuses(server):
    kiln = faces_kiln()
    with kiln.Client(f"http://127.0.0.1:{server.port}", token="") as anonymous:
        with pytest.raises(PermissionError, match="401"):
            anonymous.detect_and_embed(HOPPER)
    with pytest.raises(ValueError, match="no http"):
        kiln.Client("ftp://example")


def test_kiln_serve_process_starts_a_worker_and_stops_it():
    kiln = faces_kiln()
    os.environ.setdefault("KILN_CLI", KILN)
    with kiln.serve(models=["fr-embed"], no_faces=True, mode="cpu", quiet=True, process=True) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.port > 0
        with server.client() as c:
            assert c.ready()
            assert c.model("fr-embed").outputs[0]["shape"][-1] == 512
    assert server.process.returncode == 0
    with pytest.raises(kiln.KilnIOError, match="did not start"):
        kiln.serve(host="192.0.2.1", models=["fr-embed"], no_faces=True, process=True)  # no interface's address
