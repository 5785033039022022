"""kiln serve's POST /v1/faces as multipart/form-data (one answer per part, by name and filename, a bad part answered
in its place) and its named collections against the real binary with real photos: the same person again (the photo
scaled and re-encoded) is marked the duplicate of the face already there, at the cosine of the two embeddings, and
not added; another person is added; POST /v1/faces/search with a third photo of the first person (cropped) finds
that face first, and with an embedding as JSON finds its own face; --dedup 0 adds every face; bad input answered."""
import io
import json
import subprocess
import uuid

import numpy as np
import pytest
from PIL import Image

from conftest import KILN
from serve_util import Server

ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
HOPPER = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"

pytestmark = pytest.mark.skipif(
    "serve" not in subprocess.run([KILN, "--help"], capture_output=True, text=True).stdout
    or "built without" in subprocess.run([KILN, "serve", "--help"], capture_output=True, text=True).stdout,
    reason="this kiln is built without ONNX Runtime, faiss or Boost.Beast")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def jpeg(image):
    out = io.BytesIO()
    image.save(out, "JPEG", quality=88)
    return out.getvalue()


@pytest.fixture(scope="module")
def photos():
    astronaut = Image.open(ASTRONAUT).convert("RGB")
    return {"astronaut": read(ASTRONAUT), "hopper": read(HOPPER),
            "astronaut_small": jpeg(astronaut.resize((400, 400))),       # the same person, scaled and re-encoded
            "astronaut_crop": jpeg(astronaut.crop((60, 0, 512, 452)))}  # and cropped: another framing


def multipart(parts):
    boundary = uuid.uuid4().hex
    body = b""
    for name, filename, data in parts:
        body += (f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                 f"Content-Type: application/octet-stream\r\n\r\n").encode() + data + b"\r\n"
    return body + f"--{boundary}--\r\n".encode(), {"Content-Type": f"multipart/form-data; boundary={boundary}"}


@pytest.fixture(scope="module")
def server():
    with Server("--mode", "cpu") as s:
        yield s


def test_multipart_answers_each_part_by_name(server, photos):
    body, headers = multipart([("first", "astronaut.png", photos["astronaut"]), ("second", "notes.txt", b"not an image"),
                               ("third", "hopper.jpg", photos["hopper"])])
    status, _, answer = server.json("POST", "/v1/faces", body, headers)
    assert status == 200, answer
    assert [(i["name"], i["filename"]) for i in answer["images"]] == \
        [("first", "astronaut.png"), ("second", "notes.txt"), ("third", "hopper.jpg")]
    assert len(answer["images"][0]["faces"]) == 1 and len(answer["images"][2]["faces"]) == 1
    assert "unsupported image format" in answer["images"][1]["error"] and answer["images"][1]["faces"] == []
    # The same records as the raw body's answer.
    _, _, raw = server.json("POST", "/v1/faces", photos["astronaut"])
    assert np.allclose(raw["faces"][0]["embedding"], answer["images"][0]["faces"][0]["embedding"], atol=1e-5)
    assert "collection" not in answer and "collection_id" not in answer["images"][0]["faces"][0]


def test_the_same_person_is_a_duplicate_and_search_finds_it_first(server, photos):
    body, headers = multipart([("a", "astronaut.png", photos["astronaut"]), ("h", "hopper.jpg", photos["hopper"])])
    status, _, added = server.json("POST", "/v1/faces?collection=people", body, headers)
    assert status == 200 and added["collection"] == "people" and added["collection_size"] == 2, added
    astronaut, hopper = (i["faces"][0] for i in added["images"])
    assert (astronaut["collection_id"], astronaut["duplicate_of"]) == (0, None)
    assert (hopper["collection_id"], hopper["duplicate_of"]) == (1, None)
    assert hopper["duplicate_cosine"] < 0.7  # two people

    status, _, again = server.json("POST", "/v1/faces?collection=people&name=small.jpg", photos["astronaut_small"])
    assert status == 200 and again["collection_size"] == 2  # a duplicate is not added
    face = again["faces"][0]
    assert face["collection_id"] is None and face["duplicate_of"] == 0
    cosine = float(np.dot(face["embedding"], astronaut["embedding"]))
    assert face["duplicate_cosine"] >= 0.7 and abs(face["duplicate_cosine"] - cosine) < 1e-4

    status, _, found = server.json("POST", "/v1/faces/search?collection=people&k=2", photos["astronaut_crop"])
    assert status == 200 and found["collection_size"] == 2 and "flat" in found["index"], found
    hits = found["results"][0]["hits"]
    assert [h["id"] for h in hits] == [0, 1] and hits[0]["image"] == "astronaut.png"
    assert hits[0]["score"] > 0.7 > hits[1]["score"] and hits[0]["box"] == astronaut["box"]

    query = {"embedding": hopper["embedding"], "collection": "people", "k": 1}
    status, _, found = server.json("POST", "/v1/faces/search", query)
    assert status == 200 and [h["id"] for h in found["results"][0]["hits"]] == [1]
    assert found["results"][0]["hits"][0]["score"] == pytest.approx(1, abs=1e-4)


def test_bad_collection_and_search_input(server, photos):
    assert server.json("POST", "/v1/faces?collection=no/slash", photos["astronaut"])[0] == 400
    status, _, error = server.json("POST", "/v1/faces/search?collection=nobody", photos["astronaut"])
    assert status == 404 and "nobody" in error["error"]
    assert server.json("POST", "/v1/faces/search", photos["astronaut"])[0] == 400  # which collection?
    server.json("POST", "/v1/faces?collection=bad-input", photos["hopper"])
    assert server.json("POST", "/v1/faces/search?collection=bad-input&k=0", photos["astronaut"])[0] == 400
    status, _, error = server.json("POST", "/v1/faces/search?collection=bad-input", {"embedding": [0.1] * 10})
    assert status == 400 and "512" in error["error"]
    assert server.json("POST", "/v1/faces/search?collection=bad-input", b"\x00\x01 nothing")[0] == 415
    headers = {"Content-Type": "multipart/form-data"}  # no boundary
    status, _, error = server.json("POST", "/v1/faces", b"--x\r\n\r\nabc\r\n--x--", headers)
    assert status == 400 and "boundary" in error["error"]
    headers = {"Content-Type": "multipart/form-data; boundary=x"}
    status, _, error = server.json("POST", "/v1/faces", b"--x\r\nContent-Disposition: form-data; name=a\r\n\r\nabc", headers)
    assert status == 400 and "closing delimiter" in error["error"]


def test_without_dedup_every_face_is_added():
    with Server("--mode", "cpu", "--dedup", 0, "-q") as s:
        for expected in (0, 1):
            status, _, answer = s.json("POST", "/v1/faces?collection=all", read(ASTRONAUT))
            assert status == 200 and answer["faces"][0]["collection_id"] == expected
            assert answer["faces"][0]["duplicate_of"] is None
        assert answer["collection_size"] == 2
        status, _, found = s.json("POST", "/v1/faces/search?collection=all&k=5", read(ASTRONAUT))
        assert status == 200 and sorted(h["id"] for h in found["results"][0]["hits"]) == [0, 1]
        assert s.stop()[0] == 0


def test_collections_dir_keeps_them_as_kiln_faces_outputs(tmp_path, photos):
    folder = tmp_path / "collections"
    with Server("--mode", "cpu", "-q", "--collections-dir", folder) as s:
        body, headers = multipart([("a", "astronaut.png", photos["astronaut"]), ("h", "hopper.jpg", photos["hopper"])])
        status, _, added = s.json("POST", "/v1/faces?collection=kept", body, headers)
        assert status == 200 and added["collection_size"] == 2 and "collection_error" not in added, added
        assert s.stop()[0] == 0
    assert sorted(p.name for p in folder.iterdir()) == ["kept.h5"]
    # kiln faces search reads it as any `kiln faces` output: the crop's nearest face is the astronaut's, row 0.
    query = tmp_path / "crop.jpg"
    query.write_bytes(photos["astronaut_crop"])
    result = subprocess.run([KILN, "faces", "search", "--index", str(folder / "kept.h5"), str(query), "-k", "2",
                             "--json"], capture_output=True, text=True, check=True)
    hits = json.loads(result.stdout.splitlines()[0])["hits"]
    assert [(h["row"], h["image"]) for h in hits] == [(0, "astronaut.png"), (1, "hopper.jpg")]
    # A new server reads it back: the same person again is the duplicate of face 0, and search finds it.
    with Server("--mode", "cpu", "-q", "--collections-dir", folder) as s:
        status, _, again = s.json("POST", "/v1/faces?collection=kept", photos["astronaut_small"])
        assert status == 200 and again["faces"][0]["duplicate_of"] == 0 and again["collection_size"] == 2
        status, _, found = s.json("POST", "/v1/faces/search?collection=kept&k=1", photos["astronaut_crop"])
        assert status == 200 and found["results"][0]["hits"][0]["image"] == "astronaut.png"
        assert found["results"][0]["hits"][0]["score"] == pytest.approx(hits[0]["cosine"], abs=1e-4)
        assert s.stop()[0] == 0
