"""kiln serve's /v1/segment/stream against the real binary with a real WebSocket client (python3-websocket): a real
video's frames (tools/video/make_person_video.py, decoded to JPEG by ffmpeg) sent at camera pace get masks in order
equal to kiln segment's of the same frames with temporal smoothing; sent all at once, stale frames are dropped and
reported and the answers stay in order; a bad frame gets its error and the stream goes on; the token (header or
?token=); a client gone mid-stream leaves the server serving; frames and drops counted in /metrics."""
import glob
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
from PIL import Image

from conftest import KILN
from serve_util import Server

websocket = pytest.importorskip("websocket", reason="python3-websocket is missing (make deps)")

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAKE_VIDEO = os.path.join(SOURCE_DIR, "tools", "video", "make_person_video.py")
TOKEN = "s3cret"
PACE_S = 0.1  # a 10 fps camera

pytestmark = pytest.mark.skipif(
    "serve" not in subprocess.run([KILN, "--help"], capture_output=True, text=True).stdout
    or "built without" in subprocess.run([KILN, "serve", "--help"], capture_output=True, text=True).stdout
    or "without ONNX Runtime or FFmpeg" in subprocess.run([KILN, "segment", "--help"], capture_output=True,
                                                          text=True).stdout
    or shutil.which("ffmpeg") is None,
    reason="this kiln is built without ONNX Runtime, faiss, Boost.Beast or FFmpeg, or the ffmpeg tool is missing")


@pytest.fixture(scope="module")
def frames(tmp_path_factory):
    """24 JPEG frames of a real video: a portrait, a photo without a person, another portrait (8 frames each)."""
    folder = tmp_path_factory.mktemp("stream")
    video = folder / "person.mp4"
    subprocess.run([sys.executable, MAKE_VIDEO, "-o", str(video), "--size", "320x180", "--fps", "10",
                    "--seconds", "0.8", "--no-audio"], check=True, capture_output=True)
    shots = folder / "shots"
    shots.mkdir()
    subprocess.run(["ffmpeg", "-v", "error", "-i", str(video), "-q:v", "3", str(shots / "%03d.jpg")], check=True)
    paths = sorted(glob.glob(str(shots / "*.jpg")))
    assert len(paths) == 24
    return shots, [open(p, "rb").read() for p in paths]


def kiln_segment_masks(frames, folder, temporal):
    """kiln segment's masks of the frames as one image sequence: its probabilities (npy) at the default threshold."""
    shots, _ = frames
    out = folder / f"p{temporal}.npy"
    subprocess.run([KILN, "segment", str(shots), "-o", str(out), "--output", "npy", "--mode", "cpu", "-q",
                    "--temporal", str(temporal)], check=True, capture_output=True)
    return np.load(out).astype(np.float32) >= 0.5


@pytest.fixture(scope="module")
def server():
    with Server("--segment", "--no-faces", "--mode", "cpu", "--token", TOKEN) as s:
        yield s


def connect(server, query="", headers=True):
    return websocket.create_connection(f"ws://127.0.0.1:{server.port}/v1/segment/stream{query}", timeout=120,
                                       header=[f"Authorization: Bearer {TOKEN}"] if headers else [])


def receive(ws):
    """One answer: its JSON header and, for a segmented frame, the mask (a 2-D uint8 array)."""
    opcode, data = ws.recv_data()
    assert opcode == websocket.ABNF.OPCODE_TEXT, (opcode, data[:100])
    header = json.loads(data)
    if header["status"] != 200:
        return header, None
    opcode, data = ws.recv_data()
    assert opcode == websocket.ABNF.OPCODE_BINARY
    return header, np.array(Image.open(io.BytesIO(data)))


def test_paced_frames_get_kiln_segments_smoothed_masks_in_order(server, frames, tmp_path):
    smoothed = kiln_segment_masks(frames, tmp_path, 0.7)  # kiln segment's default smoothing
    unsmoothed = kiln_segment_masks(frames, tmp_path, 0)
    ws = connect(server)
    masks = []
    try:
        for number, data in enumerate(frames[1]):
            sent = time.monotonic()
            ws.send_binary(data)
            header, mask = receive(ws)
            assert header["frame"] == number and header["dropped"] == [], header
            assert header["width"] == 320 and header["height"] == 180 and header["latency_ms"] > 0
            assert mask.shape == (180, 320) and mask.dtype == np.uint8 and set(np.unique(mask)) <= {0, 255}
            masks.append(mask == 255)
            time.sleep(max(0.0, PACE_S - (time.monotonic() - sent)))  # the next frame when the camera has it
    finally:
        ws.close()
    masks = np.array(masks)
    agreement = (masks == smoothed).mean(axis=(1, 2))
    # The same model, preprocess, smoothing, upsampling and threshold; kiln segment's npy holds float16, so a
    # probability within a rounding of the threshold may fall either way.
    assert agreement.min() >= 0.99, agreement
    assert masks[:8].mean() > 0.1 and masks[8:16].mean() < 0.02 and masks[16:].mean() > 0.1  # person, none, person
    # Smoothing is on: kiln segment's smoothed and unsmoothed masks differ (measured: up to 4.7 % of a frame's
    # pixels, 1.4 % over the clip), and the stream's are the smoothed ones (measured: 0.0006 % of pixels differ).
    assert (smoothed != unsmoothed).mean(axis=(1, 2)).max() > 0.01
    assert (masks != smoothed).mean() * 10 < (masks != unsmoothed).mean()


def test_a_burst_drops_stale_frames_and_keeps_answers_in_order(server, frames):
    dropped_before = server.metric('kiln_serve_stream_frames_total{outcome="dropped"}',
                                   headers={"Authorization": f"Bearer {TOKEN}"})
    ws = connect(server, f"?token={TOKEN}", headers=False)  # as a browser does: no headers on a WebSocket
    answered, reported = [], []
    try:
        for data in frames[1]:
            ws.send_binary(data)
        last = len(frames[1]) - 1
        while not answered or answered[-1] != last:
            header, mask = receive(ws)
            assert header["status"] == 200 and mask.shape == (180, 320), header
            # Dropped while this frame was being segmented (they came after it), reported with its answer.
            assert all(d > header["frame"] for d in header["dropped"]), header
            answered.append(header["frame"])
            reported += header["dropped"]
    finally:
        ws.close()
    assert answered == sorted(set(answered)) and answered[0] == 0  # in order, each once
    assert reported, "a burst of 24 frames dropped none"
    assert sorted(answered + reported) == list(range(len(frames[1])))  # every frame answered or reported dropped
    dropped_after = server.metric('kiln_serve_stream_frames_total{outcome="dropped"}',
                                  headers={"Authorization": f"Bearer {TOKEN}"})
    assert dropped_after - dropped_before == len(reported)


def test_a_bad_frame_gets_its_error_and_the_stream_goes_on(server, frames):
    good = frames[1][0]
    ws = connect(server)
    try:
        ws.send_binary(good)
        assert receive(ws)[0]["status"] == 200
        ws.send_binary(b"GIF89a-not-really")
        header, _ = receive(ws)
        assert header["frame"] == 1 and header["status"] == 400 and "could not be read" in header["error"], header
        ws.send_binary(b"\x00\x01 no image at all")
        header, _ = receive(ws)
        assert header["frame"] == 2 and header["status"] == 415 and "unsupported image format" in header["error"]
        ws.send("a text message")
        header, _ = receive(ws)
        assert header["frame"] == 3 and header["status"] == 400 and "binary message" in header["error"]
        ws.send_binary(good)
        header, mask = receive(ws)
        assert header["frame"] == 4 and header["status"] == 200 and mask.shape == (180, 320)
    finally:
        ws.close()


def test_the_token_is_required_and_a_plain_get_is_told_to_upgrade(server):
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        connect(server, headers=False)
    assert refused.value.status_code == 401
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        connect(server, "?token=wrong", headers=False)
    assert refused.value.status_code == 401
    status, headers, body = server.request("GET", "/v1/segment/stream", headers={"Authorization": f"Bearer {TOKEN}"})
    assert status == 426 and headers["upgrade"] == "websocket" and b"WebSocket" in body


def test_a_client_gone_mid_stream_leaves_the_server_serving(server, frames):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    for _ in range(3):
        ws = connect(server)
        for data in frames[1][:10]:
            ws.send_binary(data)
        ws.sock.shutdown(socket.SHUT_RDWR)  # gone without a close frame, answers unread
        ws.sock.close()
    ws = connect(server)
    try:
        ws.send_binary(frames[1][0])
        header, mask = receive(ws)
        assert header["frame"] == 0 and header["status"] == 200 and mask.shape == (180, 320)
    finally:
        ws.close()
    assert server.json("GET", "/v2/health/live", headers=auth)[2] == {"live": True}
    deadline = time.monotonic() + 30
    while server.metric("kiln_serve_stream_connections", headers=auth) != 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.metric("kiln_serve_stream_connections", headers=auth) == 0
    assert server.metric('kiln_serve_stream_frames_total{outcome="answered"}', headers=auth) >= 2


def test_without_segment_the_upgrade_is_refused_saying_how():
    with Server("--no-faces") as s:
        with pytest.raises(websocket.WebSocketBadStatusException) as refused:
            websocket.create_connection(f"ws://127.0.0.1:{s.port}/v1/segment/stream", timeout=60)
        assert refused.value.status_code == 404
        assert s.stop()[0] == 0


def test_sigterm_with_a_stream_open_exits_0(frames):
    with Server("--segment", "--no-faces", "--mode", "cpu") as s:
        ws = websocket.create_connection(f"ws://127.0.0.1:{s.port}/v1/segment/stream", timeout=60)
        for data in frames[1][:10]:
            ws.send_binary(data)
        assert receive(ws)[0]["frame"] == 0
        code, log = s.stop()
        assert code == 0 and "serve: stopped" in log
        ws.close()
