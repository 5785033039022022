"""kiln serve's face API against the real binary: the crawler's exact request and response shapes on a real photo,
per-image errors as per-image results, bad input (400, 404, 405, 413, 415), batching across concurrent requests seen
in /metrics, a full queue (429) and a queue timeout (504), a client killed mid-request, and the SIGTERM drain."""
import base64
import socket
import struct
import subprocess
import threading
import time

import numpy as np
import pytest

from conftest import KILN
from serve_util import Server

ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
HOPPER = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>'

pytestmark = pytest.mark.skipif(
    "serve" not in subprocess.run([KILN, "--help"], capture_output=True, text=True).stdout
    or "built without" in subprocess.run([KILN, "serve", "--help"], capture_output=True, text=True).stdout,
    reason="this kiln is built without ONNX Runtime, faiss or Boost.Beast")


def b64(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def crawler_request(*images, **options):
    return {"images": [{"data": data, "image_id": f"img_{i}"} for i, data in enumerate(images)],
            "min_face_quality": 0.5, "require_face": False, "crop_faces": True, "face_margin": 0.2, **options}


@pytest.fixture(scope="module")
def server():
    # A long queue delay: concurrent single-image requests wait for each other and run as one batch.
    with Server("--max-body-mb", 4, "--max-queue-delay-us", 200000, "--max-batch", 8, "--mode", "cpu") as s:
        yield s


def test_detect_and_embed_batch_answers_the_crawlers_fields(server):
    astronaut = b64(ASTRONAUT)
    body = crawler_request(astronaut, b64(HOPPER), "not base64 !!", base64.b64encode(SVG).decode())
    status, headers, answer = server.json("POST", "/detect_and_embed_batch", body, {"Content-Type": "application/json"})
    assert status == 200
    assert set(answer) >= {"results", "processing_time_ms", "gpu_used", "worker_id"}
    assert isinstance(answer["gpu_used"], bool) and answer["worker_id"] == "kiln-serve"
    assert answer["processing_time_ms"] > 0
    results = answer["results"]
    assert len(results) == 4  # one list per image, in order
    assert len(results[0]) == 1  # the astronaut
    face = results[0][0]
    x1, y1, x2, y2 = face["bbox"]  # the worker's [x1, y1, x2, y2] in the photo's pixels (512 x 512)
    assert 0 <= x1 < x2 <= 512 and 0 <= y1 < y2 <= 512
    assert 150 < (x1 + x2) / 2 < 300 and 50 < (y1 + y2) / 2 < 200  # her face, upper middle
    assert len(face["landmarks"]) == 6 and all(len(p) == 2 for p in face["landmarks"])
    assert all(x1 - 40 <= p[0] <= x2 + 40 and y1 - 40 <= p[1] <= y2 + 40 for p in face["landmarks"])
    embedding = np.array(face["embedding"])
    assert embedding.shape == (512,) and abs(np.linalg.norm(embedding) - 1) < 1e-3
    assert 0.5 <= face["quality"] <= 1 and face["age"] is None and face["gender"] is None
    assert len(results[1]) >= 1  # Grace Hopper
    assert results[2] == [] and results[3] == []  # per-image errors are per-image results
    errors = {e["image_id"]: e["error"] for e in answer["errors"]}
    assert "base64" in errors["img_2"] and "SVG" in errors["img_3"]
    assert int(headers["kiln-batch-size"]) >= 1 and float(headers["kiln-queue-ms"]) >= 0

    # detect_faces_batch answers alike (the worker's did), and min_face_quality filters by the detection score.
    status, _, same = server.json("POST", "/detect_faces_batch", crawler_request(astronaut))
    assert status == 200 and np.allclose(same["results"][0][0]["embedding"], embedding, atol=1e-5)
    _, _, strict = server.json("POST", "/detect_faces_batch", crawler_request(astronaut, min_face_quality=0.999))
    assert strict["results"] == [[]]


def test_health_and_gpu_info(server):
    status, _, health = server.json("GET", "/health")
    assert status == 200 and health["status"] == "healthy" and health["model_loaded"] is True
    assert health["uptime_seconds"] > 0 and health["gpu_available"] is False  # no GPU here
    status, _, info = server.json("GET", "/gpu_info")
    assert status == 200 and info["gpu_actually_used"] is False
    assert info["model_info"]["detection"]["providers"] == ["CPUExecutionProvider"]


def test_v1_faces_takes_raw_bytes_and_names_an_unknown_format(server):
    with open(ASTRONAUT, "rb") as f:
        status, _, answer = server.json("POST", "/v1/faces", f.read(), {"Content-Type": "image/png"})
    assert status == 200 and len(answer["faces"]) == 1
    assert set(answer["faces"][0]["quality"]) == {"blur", "brightness", "contrast", "sharpness", "overall_score"}
    status, _, error = server.json("POST", "/v1/faces", SVG, {"Content-Type": "image/svg+xml"})
    assert status == 415 and "SVG" in error["error"]


def test_bad_requests_are_refused_with_the_reason(server):
    status, _, error = server.json("POST", "/detect_faces_batch", b"{not json", {"Content-Type": "application/json"})
    assert status == 400 and "JSON" in error["error"]
    status, _, error = server.json("POST", "/detect_faces_batch", {"pictures": []})
    assert status == 400 and "images" in error["error"]
    status, _, error = server.json("POST", "/detect_faces_batch", {"images": [{"image_id": "x"}]})
    assert status == 400 and "images[0].data" in error["error"]
    status, _, error = server.json("POST", "/detect_faces_batch", {"images": [], "min_face_quality": "high"})
    assert status == 400 and "min_face_quality" in error["error"]
    assert server.json("GET", "/no/such/thing")[0] == 404
    assert server.json("GET", "/detect_faces_batch")[0] == 405
    status, _, error = server.json("POST", "/v1/faces", b"x" * (5 << 20))  # over --max-body-mb 4
    assert status == 413 and "limit" in error["error"]
    assert server.json("GET", "/health")[0] == 200  # and it still serves


def test_concurrent_requests_are_batched(server):
    runs = server.metric('kiln_serve_model_runs_total{model="faces"}')
    items = server.metric('kiln_serve_model_items_total{model="faces"}')
    astronaut = b64(ASTRONAUT)
    answers = [None] * 6

    def one(i):
        answers[i] = server.json("POST", "/detect_and_embed_batch", crawler_request(astronaut))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(a[0] == 200 and len(a[2]["results"][0]) == 1 for a in answers)
    assert server.metric('kiln_serve_model_items_total{model="faces"}') - items == 6
    new_runs = server.metric('kiln_serve_model_runs_total{model="faces"}') - runs
    assert 1 <= new_runs < 6  # fewer model runs than requests
    assert max(int(a[1]["kiln-batch-size"]) for a in answers) > 1


def test_a_client_killed_mid_request_leaves_the_server_serving(server):
    for _ in range(3):
        s = socket.create_connection(("127.0.0.1", server.port))
        s.sendall(b"POST /detect_faces_batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100000\r\n\r\n{\"images\": [")
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        s.close()
    # A client that sends a whole request and leaves before the answer.
    s = socket.create_connection(("127.0.0.1", server.port))
    body = ('{"images": [{"data": "%s"}]}' % b64(ASTRONAUT)).encode()
    s.sendall(b"POST /detect_faces_batch HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    s.close()
    status, _, answer = server.json("POST", "/detect_faces_batch", crawler_request(b64(ASTRONAUT)))
    assert status == 200 and len(answer["results"][0]) == 1


def test_a_full_queue_is_429_and_a_request_past_its_timeout_504():
    # One queued image at most; the batch would leave after 5 s, but a request may wait 0.5 s.
    with Server("--max-queue", 1, "--max-queue-delay-us", 5000000, "--timeout", 0.5, "--mode", "cpu", "-q") as s:
        first = {}
        thread = threading.Thread(target=lambda: first.update(answer=s.json(
            "POST", "/detect_faces_batch", crawler_request(b64(HOPPER)))))
        thread.start()
        time.sleep(0.2)
        status, headers, error = s.json("POST", "/detect_faces_batch", crawler_request(b64(HOPPER)))
        assert status == 429 and headers["retry-after"] == "1" and "full" in error["error"]
        thread.join()
        status, _, error = first["answer"]
        assert status == 504 and "timeout" in error["error"]
        assert s.metric('kiln_serve_rejected_total{model="faces",reason="timeout"}') == 1
        assert s.stop()[0] == 0


def test_sigterm_answers_the_queued_requests_then_exits_0():
    with Server("--max-queue-delay-us", 3000000, "--mode", "cpu", "--drain", 30) as s:
        answers = []

        def one():
            answers.append(s.json("POST", "/detect_and_embed_batch", crawler_request(b64(ASTRONAUT)))[0])

        threads = [threading.Thread(target=one) for _ in range(3)]
        for t in threads:
            t.start()
        time.sleep(0.5)  # queued, waiting for the 3 s delay
        code, log = s.stop()
        for t in threads:
            t.join()
        assert code == 0
        assert answers == [200, 200, 200]
        lines = [line for line in log.splitlines() if line.startswith("{")]
        assert sum('"path":"/detect_and_embed_batch"' in line and '"status":200' in line for line in lines) == 3
        with pytest.raises(ConnectionError):
            socket.create_connection(("127.0.0.1", s.port), timeout=2)


def test_a_request_may_lower_its_timeout_and_ask_for_a_priority():
    # Batches of one image; the worker is kept busy by a first request of sixteen images.
    with Server("--max-batch", 1, "--max-queue-delay-us", 0, "--mode", "cpu", "-q") as s:
        status, _, error = s.json("POST", "/detect_faces_batch", crawler_request(b64(HOPPER)),
                                  {"kiln-priority": "9"})
        assert status == 400 and "kiln-priority" in error["error"]
        assert s.json("POST", "/detect_faces_batch", crawler_request(), {"kiln-timeout-ms": "soon"})[0] == 400
        finished = {}

        def send(name, images, headers):
            status = s.json("POST", "/detect_faces_batch", crawler_request(*images), headers)[0]
            finished[name] = (status, time.monotonic())

        hopper = b64(HOPPER)
        busy = threading.Thread(target=send, args=("busy", [hopper] * 16, {}))
        busy.start()
        deadline = time.monotonic() + 30
        while s.metric('kiln_serve_queue_items{model="faces"}') < 8 and time.monotonic() < deadline:
            time.sleep(0.005)  # until the busy request's images are queued
        low = threading.Thread(target=send, args=("low", [hopper] * 3, {"kiln-priority": "3"}))
        low.start()
        time.sleep(0.05)
        expired = threading.Thread(target=send, args=("expired", [hopper], {"kiln-timeout-ms": "1"}))
        expired.start()
        high = threading.Thread(target=send, args=("high", [hopper], {"kiln-priority": "1"}))
        high.start()
        for t in (busy, low, expired, high):
            t.join()
        assert finished["expired"][0] == 504
        assert finished["high"][0] == finished["low"][0] == finished["busy"][0] == 200
        assert finished["high"][1] < finished["low"][1]  # queued last, answered before the low-priority request
        assert finished["high"][1] < finished["busy"][1]  # and before the rest of the default-priority one
