"""kiln serve with --tls-cert/--tls-key against the real binary: a self-signed certificate made here with `openssl req`
serves HTTPS (python's ssl context trusting it; keep-alive) and WSS (/v1/segment/stream) on the port, and TLS on
--grpc-port (python3-grpcio's ssl channel); a client that does not trust it, or speaks plain HTTP or plaintext gRPC,
is refused and the server goes on; a key that is not the certificate's, a file that is no key, or a certificate
without its key stop the start with a clear error."""
import http.client
import json
import re
import shutil
import ssl
import subprocess

import pytest

from conftest import KILN

ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"

pytestmark = pytest.mark.skipif(
    "serve" not in subprocess.run([KILN, "--help"], capture_output=True, text=True).stdout
    or "built without" in subprocess.run([KILN, "serve", "--help"], capture_output=True, text=True).stdout
    or shutil.which("openssl") is None,
    reason="this kiln is built without ONNX Runtime, faiss or Boost.Beast, or the openssl tool is missing (make deps)")
_serve_help = subprocess.run([KILN, "serve", "--help"], capture_output=True, text=True).stdout
GRPC = "--grpc-port" in _serve_help and "built without gRPC" not in _serve_help
SEGMENT = "without ONNX Runtime or FFmpeg" not in subprocess.run([KILN, "segment", "--help"], capture_output=True,
                                                                 text=True).stdout


def self_signed(folder, name, subject="/CN=127.0.0.1"):
    cert, key = folder / f"{name}.pem", folder / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", subject, "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    return self_signed(tmp_path_factory.mktemp("tls"), "server")


@pytest.fixture(scope="module")
def server(certificate):
    cert, key = certificate
    process = subprocess.Popen([KILN, "serve", "--port", "0", "--no-faces", *(["--segment"] if SEGMENT else []),
                                *(["--grpc-port", "0"] if GRPC else []), "--mode", "cpu", "-q",
                                "--tls-cert", str(cert), "--tls-key", str(key)], stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    match = re.search(r"listening on https://127\.0\.0\.1:(\d+)", line)
    try:
        assert match, line
        grpc_port = None
        if GRPC:
            grpc_line = process.stdout.readline()
            grpc_match = re.search(r"grpc listening on 127\.0\.0\.1:(\d+) \(TLS\)", grpc_line)
            assert grpc_match, grpc_line
            grpc_port = int(grpc_match.group(1))
        yield int(match.group(1)), ssl.create_default_context(cafile=str(cert)), grpc_port
    finally:
        process.terminate()
        assert process.wait(timeout=60) == 0


def get(port, context, path):
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=60)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read(), connection.sock.version()
    finally:
        connection.close()


def test_https_with_a_trusted_self_signed_certificate(server):
    port, context, _ = server
    status, body, version = get(port, context, "/health")
    # /health is the face API's (not loaded here: 404 names the path); /v2/health/live answers on any server.
    assert status == 404 and b"/health" in body and version in ("TLSv1.2", "TLSv1.3")
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=60)
    for _ in range(2):  # keep-alive over one TLS connection
        connection.request("GET", "/v2/health/live")
        response = connection.getresponse()
        assert response.status == 200 and json.loads(response.read()) == {"live": True}
    connection.close()


def test_untrusted_and_plain_clients_are_refused_and_the_server_goes_on(server):
    port, context, _ = server
    with pytest.raises(ssl.SSLCertVerificationError):
        get(port, ssl.create_default_context(), "/v2/health/live")  # the system's CAs do not know it
    plain = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError)):
        plain.request("GET", "/v2/health/live")
        plain.getresponse()
    assert get(port, context, "/v2/health/live")[0] == 200


def test_wss_stream(server, certificate):
    websocket = pytest.importorskip("websocket", reason="python3-websocket is missing (make deps)")
    if not SEGMENT:
        pytest.skip("this kiln is built without FFmpeg (no /v1/segment/stream)")
    port, _, _ = server
    ws = websocket.create_connection(f"wss://127.0.0.1:{port}/v1/segment/stream", timeout=120,
                                     sslopt={"ca_certs": str(certificate[0])})
    try:
        with open(ASTRONAUT, "rb") as f:
            ws.send_binary(f.read())
        header = json.loads(ws.recv())
        assert header["frame"] == 0 and header["status"] == 200 and (header["width"], header["height"]) == (512, 512)
        assert ws.recv()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        ws.close()


def grpc_live(channel):
    """ServerLive without generated classes: an empty request; the answer is ServerLiveResponse{live = 1}."""
    call = channel.unary_unary("/inference.GRPCInferenceService/ServerLive", request_serializer=lambda m: m,
                               response_deserializer=lambda b: b)
    return call(b"", timeout=30)


def test_grpc_over_tls_and_plaintext_or_untrusted_refused(server, certificate):
    grpc = pytest.importorskip("grpc", reason="python3-grpcio is not installed (make deps)")
    if not GRPC:
        pytest.skip("this kiln is built without gRPC")
    address = f"127.0.0.1:{server[2]}"
    trusted = grpc.ssl_channel_credentials(root_certificates=certificate[0].read_bytes())
    with grpc.secure_channel(address, trusted) as channel:
        assert grpc_live(channel) == b"\x08\x01"  # live: true
    with grpc.insecure_channel(address) as channel, pytest.raises(grpc.RpcError) as plain:
        grpc_live(channel)
    assert plain.value.code() == grpc.StatusCode.UNAVAILABLE
    with grpc.secure_channel(address, grpc.ssl_channel_credentials()) as channel, \
            pytest.raises(grpc.RpcError) as untrusted:  # the system's CAs do not know it
        grpc_live(channel)
    assert untrusted.value.code() == grpc.StatusCode.UNAVAILABLE
    with grpc.secure_channel(address, trusted) as channel:  # the server goes on
        assert grpc_live(channel) == b"\x08\x01"


@pytest.mark.parametrize("case", ["other key", "not a key", "no key"])
def test_a_bad_key_is_a_clear_error_at_start(tmp_path, certificate, case):
    cert, _ = certificate
    args = ["--tls-cert", str(cert)]
    if case == "other key":
        args += ["--tls-key", str(self_signed(tmp_path, "other", "/CN=other")[1])]
    elif case == "not a key":
        (tmp_path / "notes.txt").write_text("not a key\n")
        args += ["--tls-key", str(tmp_path / "notes.txt")]
    result = subprocess.run([KILN, "serve", "--port", "0", "--no-faces", *args], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode != 0 and "listening" not in result.stdout
    expected = {"other key": "key values mismatch", "not a key": "expected the PEM private key of --tls-cert",
                "no key": "TLS needs both --tls-cert and --tls-key"}[case]
    assert expected in result.stderr, result.stderr
