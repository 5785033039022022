"""kiln.serve in this process (the serve code on the extension's background threads): /v1/faces and a v2 infer equal to
kiln.faces and kiln.Model in the same process, stop() draining and closing the port, Ctrl-C staying the
interpreter's, two servers side by side, and clear errors for an address in use and an unknown option; HTTPS with a
self-signed certificate made here; a queued request answered by stop(); the gRPC port called by python3-grpcio in
the same process."""
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess

import numpy as np
import pytest

import kiln

if not hasattr(kiln._kiln, "serve_start"):
    pytest.skip("kiln built without kiln serve (ONNX Runtime, faiss, Boost.Beast, OpenSSL)", allow_module_level=True)
faces = pytest.importorskip("kiln.faces", reason="kiln built without ONNX Runtime or faiss")

HOPPER = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"


def refused(port):
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_in_process_answers_equal_kiln_faces_and_kiln_model_and_stop_closes_the_port():
    server = kiln.serve(models=["fr-embed"], mode="cpu", quiet=True, threads=1)
    try:
        assert server.url == f"http://127.0.0.1:{server.port}" and server.running and server.grpc_port is None
        assert "fr-embed on cpu" in server.stderr()
        with server.client() as client:
            assert client.ready()
            remote = client.detect_and_embed(HOPPER)
            x = np.random.default_rng(31).standard_normal((2, 3, 112, 112)).astype(np.float32)
            outputs = client.model("fr-embed")(x)
        local = faces.detect_and_embed(HOPPER, min_score=0.5)
        assert len(remote) == len(local) == 1
        assert np.allclose(remote[0]["bbox"], local[0]["bbox"], atol=1.0)
        assert float(np.dot(remote[0]["embedding"], local[0]["embedding"])) > 0.999
        assert remote[0]["accepted"] == local[0]["accepted"]
        expected = kiln.Model("fr-embed", "cpu")(x)
        assert set(outputs) == set(expected)
        for name, value in expected.items():
            assert outputs[name].shape == value.shape and np.allclose(outputs[name], value, atol=1e-5)
    finally:
        assert server.stop() == 0
    assert not server.running
    refused(server.port)
    assert server.stop() == 0  # a second stop does nothing


def test_ctrl_c_is_the_interpreters_and_two_servers_run_side_by_side():
    with kiln.serve(no_faces=True, quiet=True) as first, kiln.serve(no_faces=True, quiet=True) as second:
        assert first.port != second.port
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)  # Python's handler, not the server's drain
        for server in (first, second):
            assert server.running
            with server.client() as client:
                status, _, body = client.request("GET", "/v2/health/live")
                assert status == 200 and json.loads(body) == {"live": True}
        with pytest.raises(kiln.KilnIOError, match=f"cannot listen on 127.0.0.1:{first.port}"):
            kiln.serve(port=first.port, no_faces=True, quiet=True)
        first.stop()
        refused(first.port)
        with second.client() as client:
            assert client.request("GET", "/v2/health/live")[0] == 200


def test_bad_options_are_clear_errors():
    with pytest.raises(kiln.KilnValueError, match="unknown option max_bach"):
        kiln.serve(no_faces=True, max_bach=8)
    with pytest.raises(kiln.KilnValueError, match="max-batch must be at least 1"):
        kiln.serve(no_faces=True, max_batch=0)
    with pytest.raises(kiln.KilnValueError, match="process=True"):
        kiln.serve(config="serve.yaml")


@pytest.mark.skipif(shutil.which("openssl") is None, reason="the openssl tool is missing (make deps)")
def test_https_in_process_with_a_self_signed_certificate(tmp_path):
    cert, key = tmp_path / "server.pem", tmp_path / "server.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    with kiln.serve(no_faces=True, quiet=True, tls_cert=cert, tls_key=key, token="t0k") as server:
        assert server.url.startswith("https://127.0.0.1:")
        with server.client() as client:  # trusts the server's certificate and sends its token
            assert client.ready()
        with kiln.Client(server.url, token="t0k") as untrusting:  # the system's CAs do not know it
            with pytest.raises(ssl.SSLCertVerificationError):
                untrusting.ready()


def test_grpc_in_process_beside_python_grpcio():
    grpc = pytest.importorskip("grpc", reason="python3-grpcio is not installed (make deps)")
    try:
        server = kiln.serve(no_faces=True, quiet=True, grpc_port=0)
    except kiln.KilnValueError as error:
        pytest.skip(str(error))  # built without gRPC
    with server, grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        live = channel.unary_unary("/inference.GRPCInferenceService/ServerLive", request_serializer=lambda m: m,
                                   response_deserializer=lambda b: b)
        assert live(b"", timeout=30) == b"\x08\x01"  # ServerLiveResponse{live: true}


def test_stop_answers_a_queued_request_first():
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415
    server = kiln.serve(models=["fr-embed"], no_faces=True, mode="cpu", quiet=True, threads=1, instances=1,
                        max_queue_delay_us=20_000_000)  # a lone request waits in the queue until the drain
    x = np.random.default_rng(7).standard_normal((1, 3, 112, 112)).astype(np.float32)
    answers = []
    with server.client() as client:
        model = client.model("fr-embed")
        caller = threading.Thread(target=lambda: answers.append(model(x)))
        caller.start()
        deadline = time.monotonic() + 30
        while 'kiln_serve_queue_items{model="fr-embed"} 1' not in client.metrics():
            assert time.monotonic() < deadline and caller.is_alive(), "the request never reached the queue"
            time.sleep(0.02)
        server.stop()  # within drain= (10 s): the drain runs the batch without waiting for the queue delay
        caller.join(timeout=30)
    assert len(answers) == 1
    expected = kiln.Model("fr-embed", "cpu")(x)
    for name, value in expected.items():
        assert np.allclose(answers[0][name], value, atol=1e-5)
    refused(server.port)
