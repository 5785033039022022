"""kiln serve's Open Inference Protocol over gRPC (inference.GRPCInferenceService) with the real python3-grpcio client
and message classes generated here by protoc from src/apps/serve/proto/grpc_service.proto: health, readiness and
metadata; ModelInfer on fr-embed equal to REST's JSON infer and to kiln.Model, with raw and typed contents; the codes
of bad requests, an unknown or failed model, a queue timeout, a full queue and an oversized message; the token; gRPC
and REST requests sharing batches (seen in /metrics); SIGTERM draining a call."""
import importlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from conftest import KILN
from serve_util import Server, kiln_module

grpc = pytest.importorskip("grpc", reason="python3-grpcio is not installed (make deps)")

SOURCE_DIR = os.environ.get("KILN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
PROTO_DIR = os.path.join(SOURCE_DIR, "src", "apps", "serve", "proto")
TOKEN = "s3cret"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
REST_AUTH = {"Authorization": f"Bearer {TOKEN}"}

_help = subprocess.run([KILN, "serve", "--help"], capture_output=True, text=True).stdout
pytestmark = pytest.mark.skipif("--grpc-port" not in _help or "built without gRPC" in _help,
                                reason="this kiln is built without kiln serve (ONNX Runtime, faiss, Beast) or gRPC")


@pytest.fixture(scope="module")
def pb(tmp_path_factory):
    """The protocol's message classes, generated from kiln's .proto (grpc_tools is too old on Debian 12)."""
    if shutil.which("protoc") is None:
        pytest.skip("protoc is not installed (make deps)")
    out = tmp_path_factory.mktemp("pb")
    subprocess.run(["protoc", f"-I{PROTO_DIR}", f"--python_out={out}", "grpc_service.proto"], check=True)
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module("grpc_service_pb2")
    finally:
        sys.path.remove(str(out))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    broken = tmp_path_factory.mktemp("models") / "broken.onnx"
    broken.write_bytes(b"\x08\x07 not a whole model")
    with Server("--no-faces", "--models", f"fr-embed,{broken}", "--mode", "cpu", "--max-queue-delay-us", 200000,
                "--grpc-port", 0, "--token", TOKEN, "--max-body-mb", 2, "-q") as s:
        yield s


@pytest.fixture(scope="module")
def channel(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as c:
        grpc.channel_ready_future(c).result(timeout=30)
        yield c


def call(channel, pb, method, request, metadata=AUTH, timeout=60):
    """(response, the call) of one unary call; the response class is named after the method."""
    stub = channel.unary_unary(f"/inference.GRPCInferenceService/{method}",
                               request_serializer=type(request).SerializeToString,
                               response_deserializer=getattr(pb, f"{method}Response").FromString)
    return stub.with_call(request, metadata=metadata, timeout=timeout)


def refused(channel, pb, method, request, metadata=AUTH):
    """The gRPC error of a call expected to fail."""
    with pytest.raises(grpc.RpcError) as error:
        call(channel, pb, method, request, metadata)
    return error.value


def infer_request(pb, x, typed=False, name="input", datatype="FP32", model="fr-embed", raw=None):
    request = pb.ModelInferRequest(model_name=model, id="req-1")
    tensor = request.inputs.add(name=name, datatype=datatype, shape=list(x.shape))
    if typed:
        tensor.contents.fp32_contents.extend(x.ravel().tolist())
    else:
        request.raw_input_contents.append(x.tobytes() if raw is None else raw)
    return request


def output_of(response):
    (output,) = response.outputs
    return output, np.frombuffer(response.raw_output_contents[0], np.float32).reshape(tuple(output.shape))


def reference_model():
    return kiln_module().Model("fr-embed", "cpu")


def rest_body(x):
    return json.dumps({"inputs": [{"name": "input", "shape": list(x.shape), "datatype": "FP32",
                                   "data": x.ravel().tolist()}]}).encode()


def rest_infer(server, x=None, body=None):
    return server.json("POST", "/v2/models/fr-embed/infer", rest_body(x) if body is None else body, headers=REST_AUTH)


def test_health_readiness_and_metadata(server, channel, pb):
    assert call(channel, pb, "ServerLive", pb.ServerLiveRequest())[0].live is True
    assert call(channel, pb, "ServerReady", pb.ServerReadyRequest())[0].ready is False  # broken.onnx
    assert call(channel, pb, "ModelReady", pb.ModelReadyRequest(name="fr-embed"))[0].ready is True
    assert call(channel, pb, "ModelReady", pb.ModelReadyRequest(name="fr-embed", version="1"))[0].ready is True
    assert call(channel, pb, "ModelReady", pb.ModelReadyRequest(name="broken"))[0].ready is False
    error = refused(channel, pb, "ModelReady", pb.ModelReadyRequest(name="nope"))
    assert error.code() == grpc.StatusCode.NOT_FOUND and "nope" in error.details()
    error = refused(channel, pb, "ModelReady", pb.ModelReadyRequest(name="fr-embed", version="2"))
    assert error.code() == grpc.StatusCode.NOT_FOUND and "version 2" in error.details()

    meta = call(channel, pb, "ServerMetadata", pb.ServerMetadataRequest())[0]
    status, _, rest_meta = server.json("GET", "/v2", headers=REST_AUTH)
    assert status == 200 and meta.name == "kiln" and meta.version == rest_meta["version"]
    assert list(meta.extensions) == rest_meta["extensions"]

    model = call(channel, pb, "ModelMetadata", pb.ModelMetadataRequest(name="fr-embed"))[0]
    assert (model.name, list(model.versions), model.platform) == ("fr-embed", ["1"], "onnxruntime_onnx")
    assert [(t.name, t.datatype, list(t.shape)) for t in model.inputs] == [("input", "FP32", [-1, 3, 112, 112])]
    assert [(t.name, t.datatype, list(t.shape)) for t in model.outputs] == [("output", "FP32", [-1, 512])]
    error = refused(channel, pb, "ModelMetadata", pb.ModelMetadataRequest(name="broken"))
    assert error.code() == grpc.StatusCode.UNAVAILABLE and "broken.onnx" in error.details()


def test_the_token_is_required(channel, pb):
    for metadata in [(), (("authorization", "Bearer wrong"),), (("authorization", TOKEN),)]:
        for method, request in [("ServerLive", pb.ServerLiveRequest()),
                                ("ModelInfer", infer_request(pb, np.zeros((1, 3, 112, 112), np.float32)))]:
            error = refused(channel, pb, method, request, metadata)
            assert error.code() == grpc.StatusCode.UNAUTHENTICATED and "Bearer" in error.details()


def test_infer_equals_rest_and_kiln_model_with_raw_and_typed_contents(server, channel, pb):
    x = np.random.default_rng(7).uniform(-1, 1, (2, 3, 112, 112)).astype(np.float32)
    expected = reference_model()(x)["output"]
    status, _, rest = rest_infer(server, x)
    assert status == 200
    rest_output = np.array(rest["outputs"][0]["data"], np.float32).reshape(2, 512)

    for typed in (False, True):
        response, grpc_call = call(channel, pb, "ModelInfer", infer_request(pb, x, typed=typed))
        assert (response.model_name, response.model_version, response.id) == ("fr-embed", "1", "req-1")
        output, values = output_of(response)
        assert (output.name, output.datatype, list(output.shape)) == ("output", "FP32", [2, 512])
        assert len(output.contents.fp32_contents) == 0  # the values are in raw_output_contents, as Triton sends
        np.testing.assert_array_equal(values, rest_output)
        np.testing.assert_allclose(values, expected, atol=1e-5)
        trailing = dict(grpc_call.trailing_metadata())
        assert int(trailing["kiln-batch-size"]) >= 1 and float(trailing["kiln-queue-ms"]) >= 0

    request = infer_request(pb, x)
    request.outputs.add(name="output")
    request.parameters["priority"].int64_param = 1
    assert output_of(call(channel, pb, "ModelInfer", request)[0])[0].name == "output"


def test_bad_requests_get_their_code_and_reason(channel, pb):
    x = np.zeros((1, 3, 112, 112), np.float32)
    invalid = [
        (infer_request(pb, np.zeros((1, 3, 100, 100), np.float32)), "shape"),
        (infer_request(pb, x, name="pixels"), "pixels"),
        (infer_request(pb, x.astype(np.int64), datatype="INT64"), "datatype INT64, expected FP32"),
        (infer_request(pb, x.astype(np.int32), datatype="INT32"), "datatype INT32, expected FP32"),
        (infer_request(pb, x.astype(np.uint8), datatype="UINT8"), "datatype UINT8, expected FP32"),
        (infer_request(pb, x, datatype="FP16"), "FP16 is not served"),
        (infer_request(pb, x, raw=x.tobytes()[:-4]), "bytes"),
    ]
    typed_count = infer_request(pb, x, typed=True)
    del typed_count.inputs[0].contents.fp32_contents[-1]
    invalid.append((typed_count, "values in contents.fp32_contents"))
    typed_int = infer_request(pb, x, typed=True, datatype="INT32")
    typed_int.inputs[0].contents.ClearField("fp32_contents")
    typed_int.inputs[0].contents.int_contents.extend([0] * x.size)
    invalid.append((typed_int, "datatype INT32, expected FP32"))  # the int_contents read, then the model's datatype
    both = infer_request(pb, x)
    both.inputs[0].contents.fp32_contents.extend(x.ravel().tolist())
    invalid.append((both, "both"))
    two_inputs = infer_request(pb, x)
    two_inputs.inputs.add(name="input", datatype="FP32", shape=[1, 3, 112, 112])
    invalid.append((two_inputs, "takes 1 input"))
    unknown_output = infer_request(pb, x)
    unknown_output.outputs.add(name="logits")
    invalid.append((unknown_output, "logits"))
    bad_priority = infer_request(pb, x)
    bad_priority.parameters["priority"].int64_param = 9
    invalid.append((bad_priority, "priority"))
    for request, reason in invalid:
        error = refused(channel, pb, "ModelInfer", request)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and reason in error.details(), (reason, error.details())

    error = refused(channel, pb, "ModelInfer", infer_request(pb, x, model="nope"))
    assert error.code() == grpc.StatusCode.NOT_FOUND and "nope" in error.details()
    error = refused(channel, pb, "ModelInfer", infer_request(pb, x, model="broken"))
    assert error.code() == grpc.StatusCode.UNAVAILABLE and "not ready" in error.details()
    expiring = infer_request(pb, x)  # Triton's "timeout" parameter, in µs: shorter than the 200 ms queue delay
    expiring.parameters["timeout"].int64_param = 1000
    error = refused(channel, pb, "ModelInfer", expiring)
    assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED and "timeout" in error.details()
    big = np.zeros((16, 3, 112, 112), np.float32)  # 2.4 MB, over --max-body-mb 2
    error = refused(channel, pb, "ModelInfer", infer_request(pb, big))
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_grpc_and_rest_requests_share_batches(server, channel, pb):
    model = reference_model()
    rng = np.random.default_rng(11)
    inputs = [rng.uniform(-1, 1, (1, 3, 112, 112)).astype(np.float32) for _ in range(6)]
    runs = server.metric('kiln_serve_model_runs_total{model="fr-embed"}', REST_AUTH)
    answered = server.metric('kiln_serve_grpc_requests_total{method="ModelInfer",code="OK"}', REST_AUTH)
    outputs = [None] * len(inputs)
    batch_sizes = [0] * len(inputs)
    requests = [infer_request(pb, x) if i % 2 == 0 else rest_body(x) for i, x in enumerate(inputs)]
    start = threading.Barrier(len(inputs))  # bodies made beforehand: the requests arrive within the queue delay

    def one(i):
        start.wait()
        if i % 2 == 0:
            response, grpc_call = call(channel, pb, "ModelInfer", requests[i])
            outputs[i] = output_of(response)[1]
            batch_sizes[i] = int(dict(grpc_call.trailing_metadata())["kiln-batch-size"])
        else:
            status, headers, answer = rest_infer(server, body=requests[i])
            assert status == 200
            outputs[i] = np.array(answer["outputs"][0]["data"], np.float32).reshape(1, 512)
            batch_sizes[i] = int(headers["kiln-batch-size"])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, got in zip(inputs, outputs):
        np.testing.assert_allclose(got, model(x)["output"], atol=1e-5)
    assert server.metric('kiln_serve_model_runs_total{model="fr-embed"}', REST_AUTH) - runs < len(inputs)
    assert max(batch_sizes) > len(inputs) // 2  # a batch held requests of both protocols (3 of each were sent)
    assert server.metric('kiln_serve_grpc_requests_total{method="ModelInfer",code="OK"}', REST_AUTH) - answered == 3
    assert server.metric('kiln_serve_grpc_requests_total{method="ModelInfer",code="INVALID_ARGUMENT"}', REST_AUTH) > 0
    assert server.metric('kiln_serve_grpc_request_seconds_count{method="ModelInfer"}', REST_AUTH) > 3


def test_a_full_queue_is_resource_exhausted(pb):
    """--max-queue 1: a call waits in the queue for company (--max-batch 2, a long queue delay); the next is refused."""
    x = np.zeros((1, 3, 112, 112), np.float32)
    with Server("--no-faces", "--models", "fr-embed", "--mode", "cpu", "--max-queue", 1, "--max-batch", 2,
                "--max-queue-delay-us", 1000000, "--grpc-port", 0, "-q") as small, \
            grpc.insecure_channel(f"127.0.0.1:{small.grpc_port}") as small_channel:
        first = small_channel.unary_unary("/inference.GRPCInferenceService/ModelInfer",
                                          request_serializer=pb.ModelInferRequest.SerializeToString,
                                          response_deserializer=pb.ModelInferResponse.FromString).future(
            infer_request(pb, x), timeout=60)
        deadline = time.monotonic() + 10
        while small.metric('kiln_serve_queue_items{model="fr-embed"}') < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        error = refused(small_channel, pb, "ModelInfer", infer_request(pb, x), metadata=())
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "full" in error.details()
        assert output_of(first.result())[1].shape == (1, 512)
        assert small.metric('kiln_serve_rejected_total{model="fr-embed",reason="queue_full"}') == 1


def test_sigterm_answers_a_queued_call_then_exits_0(server, channel, pb):
    """Last: it stops the module's server."""
    x = np.ones((1, 3, 112, 112), np.float32)
    future = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer",
                                 request_serializer=pb.ModelInferRequest.SerializeToString,
                                 response_deserializer=pb.ModelInferResponse.FromString).future(
        infer_request(pb, x), metadata=AUTH, timeout=60)
    deadline = time.monotonic() + 10
    queued = 0
    while queued < 1 and time.monotonic() < deadline:  # queued: it waits up to --max-queue-delay-us for company
        queued = server.metric('kiln_serve_queue_items{model="fr-embed"}', REST_AUTH)
    assert queued == 1
    code, _ = server.stop()
    assert code == 0
    assert output_of(future.result())[1].shape == (1, 512)
