"""kiln serve's Open Inference Protocol (v2, REST, JSON tensors and the binary tensor data extension) on the packaged
fr-embed: health, readiness with a model that failed to load, metadata, infer equal to kiln.Model's numbers (alone
and batched across concurrent requests, seen in /metrics), binary tensors in and out equal to JSON's, and the 400s
and 404s of bad requests."""
import json
import subprocess
import threading

import numpy as np
import pytest

from conftest import KILN
from serve_util import Server, kiln_module

pytestmark = pytest.mark.skipif(
    "serve" not in subprocess.run([KILN, "--help"], capture_output=True, text=True).stdout
    or "built without" in subprocess.run([KILN, "serve", "--help"], capture_output=True, text=True).stdout,
    reason="this kiln is built without ONNX Runtime, faiss or Boost.Beast")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    broken = tmp_path_factory.mktemp("models") / "broken.onnx"
    broken.write_bytes(b"\x08\x07 not a whole model")
    with Server("--no-faces", "--models", f"fr-embed,{broken}", "--mode", "cpu", "--max-queue-delay-us", 200000,
                "-q") as s:
        yield s


def reference_model():
    return kiln_module().Model("fr-embed", "cpu")


def infer_body(x, nested=False, name="input", datatype="FP32"):
    return {"id": "req-1", "inputs": [{"name": name, "shape": list(x.shape), "datatype": datatype,
                                       "data": x.tolist() if nested else x.ravel().tolist()}]}


def test_health_and_readiness_with_a_model_that_failed_to_load(server):
    assert server.json("GET", "/v2/health/live")[0] == 200
    assert server.json("GET", "/v2/health/ready") == (400, server.json("GET", "/v2/health/ready")[1], {"ready": False})
    assert server.json("GET", "/v2/models/fr-embed/ready")[2] == {"name": "fr-embed", "ready": True}
    status, _, broken = server.json("GET", "/v2/models/broken/ready")
    assert status == 400 and broken["ready"] is False and "broken.onnx" in broken["error"]
    assert server.metric('kiln_serve_model_ready{model="broken"}') == 0
    assert server.metric('kiln_serve_model_ready{model="fr-embed"}') == 1
    status, _, meta = server.json("GET", "/v2")
    assert status == 200 and meta["name"] == "kiln" and meta["extensions"] == ["binary_tensor_data"]


def test_metadata(server):
    status, _, meta = server.json("GET", "/v2/models/fr-embed")
    assert status == 200
    assert meta == {"name": "fr-embed", "versions": ["1"], "platform": "onnxruntime_onnx",
                    "inputs": [{"name": "input", "datatype": "FP32", "shape": [-1, 3, 112, 112]}],
                    "outputs": [{"name": "output", "datatype": "FP32", "shape": [-1, 512]}]}
    assert server.json("GET", "/v2/models/fr-embed/versions/1")[2] == meta
    assert server.json("GET", "/v2/models/fr-embed/versions/2")[0] == 404
    status, _, error = server.json("GET", "/v2/models/nope")
    assert status == 404 and "nope" in error["error"]


def test_infer_gives_kiln_models_numbers_alone_and_batched(server):
    model = reference_model()
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (2, 3, 112, 112)).astype(np.float32)
    expected = model(x)["output"]
    status, headers, answer = server.json("POST", "/v2/models/fr-embed/infer", infer_body(x, nested=True))
    assert status == 200
    assert answer["model_name"] == "fr-embed" and answer["model_version"] == "1" and answer["id"] == "req-1"
    (output,) = answer["outputs"]
    assert output["name"] == "output" and output["datatype"] == "FP32" and output["shape"] == [2, 512]
    np.testing.assert_allclose(np.array(output["data"], np.float32).reshape(2, 512), expected, atol=1e-5)

    runs = server.metric('kiln_serve_model_runs_total{model="fr-embed"}')
    singles = [rng.uniform(-1, 1, (1, 3, 112, 112)).astype(np.float32) for _ in range(5)]
    answers = [None] * len(singles)

    def one(i):
        answers[i] = server.json("POST", "/v2/models/fr-embed/versions/1/infer", infer_body(singles[i]))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(singles))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x1, (status, headers, answer) in zip(singles, answers):
        assert status == 200
        got = np.array(answer["outputs"][0]["data"], np.float32).reshape(1, 512)
        np.testing.assert_allclose(got, model(x1)["output"], atol=1e-5)
    assert server.metric('kiln_serve_model_runs_total{model="fr-embed"}') - runs < len(singles)
    assert max(int(a[1]["kiln-batch-size"]) for a in answers) > 1


def test_bad_infer_requests_say_why(server):
    x = np.zeros((1, 3, 112, 112), np.float32)
    cases = [
        (infer_body(x, name="pixels"), "pixels"),
        (infer_body(x, datatype="INT32"), "datatype"),
        (infer_body(np.zeros((1, 3, 100, 100), np.float32)), "shape"),
        ({"inputs": [{"name": "input", "shape": [1, 3, 112, 112], "datatype": "FP32", "data": [1.0, 2.0]}]}, "values"),
        ({"inputs": [{"name": "input", "shape": [1], "datatype": "FP32", "data": ["a"]}]}, "numbers"),
        ({"inputs": []}, "inputs"),
        ({**infer_body(x), "outputs": [{"name": "logits"}]}, "logits"),
    ]
    for body, reason in cases:
        status, _, error = server.json("POST", "/v2/models/fr-embed/infer", body)
        assert status == 400 and reason in error["error"], (body if len(str(body)) < 300 else reason, error)
    for parameters, reason in [({"priority": 9}, "priority"), ({"priority": -1}, "priority"),
                               ({"timeout": "1"}, "timeout")]:
        status, _, error = server.json("POST", "/v2/models/fr-embed/infer", {**infer_body(x), "parameters": parameters})
        assert status == 400 and f"parameters.{reason}" in error["error"], error
    status, _, error = server.json("POST", "/v2/models/fr-embed/infer", b"[1, 2")
    assert status == 400 and "JSON" in error["error"]
    assert server.json("POST", "/v2/models/nope/infer", infer_body(x))[0] == 404
    status, _, error = server.json("POST", "/v2/models/broken/infer", infer_body(x))
    assert status == 503 and "not ready" in error["error"]
    assert server.json("GET", "/v2/models/fr-embed/infer")[0] == 405


def binary_body(x, header_extra=None, data_size=None):
    """A request in the binary tensor data extension's form: its JSON header, then the input's raw bytes."""
    header = {"inputs": [{"name": "input", "shape": list(x.shape), "datatype": "FP32",
                          "parameters": {"binary_data_size": x.nbytes if data_size is None else data_size}}]}
    header.update(header_extra or {})
    text = json.dumps(header).encode()
    return text + x.tobytes(), {"Inference-Header-Content-Length": str(len(text)),
                                "Content-Type": "application/octet-stream"}


def binary_outputs(headers, data):
    """(the JSON header, {name: array}) of an answer with binary outputs, each read back at its binary_data_size."""
    length = int(headers["inference-header-content-length"])
    header = json.loads(data[:length])
    arrays, offset = {}, length
    for output in header["outputs"]:
        assert "data" not in output and output["datatype"] == "FP32"
        size = output["parameters"]["binary_data_size"]
        arrays[output["name"]] = np.frombuffer(data[offset:offset + size], np.float32).reshape(output["shape"])
        offset += size
    assert offset == len(data)
    return header, arrays


def test_binary_tensor_data_in_and_out_equal_json(server):
    x = np.random.default_rng(9).uniform(-1, 1, (2, 3, 112, 112)).astype(np.float32)
    status, _, answer = server.json("POST", "/v2/models/fr-embed/infer", infer_body(x))
    assert status == 200
    json_out = np.array(answer["outputs"][0]["data"], np.float32).reshape(2, 512)

    body, headers = binary_body(x, {"id": "bin-1"})
    status, response_headers, answer = server.json("POST", "/v2/models/fr-embed/infer", body, headers)
    assert status == 200 and answer["id"] == "bin-1" and "inference-header-content-length" not in response_headers
    np.testing.assert_allclose(np.array(answer["outputs"][0]["data"], np.float32).reshape(2, 512), json_out, atol=1e-6)

    for extra in ({"outputs": [{"name": "output", "parameters": {"binary_data": True}}]},
                  {"parameters": {"binary_data_output": True}}):
        body, headers = binary_body(x, extra)
        status, response_headers, data = server.request("POST", "/v2/models/fr-embed/infer", body, headers)
        assert status == 200 and response_headers["content-type"] == "application/octet-stream"
        header, arrays = binary_outputs(response_headers, data)
        assert header["model_name"] == "fr-embed" and header["outputs"][0]["shape"] == [2, 512]
        assert header["outputs"][0]["parameters"]["binary_data_size"] == 2 * 512 * 4
        np.testing.assert_allclose(arrays["output"], json_out, atol=1e-6)

    # JSON in, binary out; and an output's "binary_data": false wins over the request's binary_data_output.
    body = {**infer_body(x), "outputs": [{"name": "output", "parameters": {"binary_data": True}}]}
    status, response_headers, data = server.request("POST", "/v2/models/fr-embed/infer", body)
    np.testing.assert_allclose(binary_outputs(response_headers, data)[1]["output"], json_out, atol=1e-6)
    body, headers = binary_body(x, {"parameters": {"binary_data_output": True},
                                    "outputs": [{"name": "output", "parameters": {"binary_data": False}}]})
    status, _, answer = server.json("POST", "/v2/models/fr-embed/infer", body, headers)
    assert status == 200 and len(answer["outputs"][0]["data"]) == 2 * 512


def test_binary_tensor_data_that_does_not_fit_says_why(server):
    x = np.zeros((1, 3, 112, 112), np.float32)
    body, headers = binary_body(x, data_size=x.nbytes - 4)
    status, _, error = server.json("POST", "/v2/models/fr-embed/infer", body[:-4], headers)
    assert status == 400 and "bytes for a shape of 37632" in error["error"]
    body, headers = binary_body(x)
    status, _, error = server.json("POST", "/v2/models/fr-embed/infer", body + bytes(4), headers)
    assert status == 400 and "4 bytes of binary data follow" in error["error"]
    body, headers = binary_body(x, data_size=x.nbytes + 4)
    status, _, error = server.json("POST", "/v2/models/fr-embed/infer", body, headers)
    assert status == 400 and "runs past the body" in error["error"]
    status, _, error = server.json("POST", "/v2/models/fr-embed/infer", body, {"Inference-Header-Content-Length": "x"})
    assert status == 400 and "Inference-Header-Content-Length" in error["error"]
    status, _, error = server.json("POST", "/v2/models/fr-embed/infer", body,
                                   {"Inference-Header-Content-Length": str(len(body) + 1)})
    assert status == 400 and "exceeds the body" in error["error"]
    header = binary_body(x)[0][:-x.nbytes]
    status, _, error = server.json("POST", "/v2/models/fr-embed/infer", header)
    assert status == 400 and "needs the Inference-Header-Content-Length header" in error["error"]


def test_the_protocols_priority_and_timeout_parameters(server):
    x = np.zeros((1, 3, 112, 112), np.float32)
    # 1 ms in the queue, where a lone request waits --max-queue-delay-us (200 ms) for company: 504.
    body = {**infer_body(x), "parameters": {"timeout": 1000}}
    status, _, error = server.json("POST", "/v2/models/fr-embed/infer", body)
    assert status == 504 and "timeout" in error["error"]
    status, _, answer = server.json("POST", "/v2/models/fr-embed/infer",
                                    {**infer_body(x), "parameters": {"timeout": 30000000, "priority": 1}})
    assert status == 200 and answer["outputs"][0]["shape"] == [1, 512]
    # A header says first: kiln-timeout-ms 30 s over the parameter's 1 ms.
    status, _, answer = server.json("POST", "/v2/models/fr-embed/infer", body, {"kiln-timeout-ms": "30000"})
    assert status == 200
