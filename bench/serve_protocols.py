"""serve_protocols: one `kiln serve` answering the same Open Inference Protocol infer on a packaged model three ways,
REST with JSON tensors, REST with the binary tensor data extension and gRPC (raw_input_contents), each loaded by
`--clients` closed-loop clients (Python threads, keep-alive, bodies made beforehand) for `--seconds`.

    python3 bench/serve_protocols.py [--model fr-embed] [--batch 1] [--seconds 15] [--clients 8] [--json FILE]

Prints per protocol: requests/s, p50 and p99 latency, the mean batch the model ran (from /metrics) and the server's
CPU seconds per request (from /proc), then one JSON object.
"""
import argparse
import http.client
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

import grpc
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def metric(port, name):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/metrics")
    for line in connection.getresponse().read().decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rest_sender(port, body, headers):
    def make():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

        def send():
            connection.request("POST", f"/v2/models/{MODEL}/infer", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            return response.status == 200
        return send
    return make


def grpc_sender(channel, request):
    data = request.SerializeToString()  # sent as bytes, the answer read as bytes: the client's protobuf work left out
    call = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer")

    def make():
        def send():
            call(data, timeout=60)
            return True
        return send
    return make


def load(make_sender, clients, seconds):
    latencies, failures = [], [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client():
        send = make_sender()
        mine = []
        while time.monotonic() < stop:
            start = time.monotonic()
            ok = send()
            if ok:
                mine.append(time.monotonic() - start)
            else:
                failures[0] += 1
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ordered = sorted(latencies)
    pick = lambda p: ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1e3 if ordered else float("nan")
    return {"requests_per_s": len(ordered) / seconds, "ok": len(ordered), "failed": failures[0],
            "p50_ms": pick(0.5), "p99_ms": pick(0.99)}


def main():
    global MODEL
    parser = argparse.ArgumentParser()
    parser.add_argument("--kiln", default=os.path.join(ROOT, "build", "kiln"))
    parser.add_argument("--model", default="fr-embed")
    parser.add_argument("--batch", type=int, default=1, help="rows per request")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--json")
    args = parser.parse_args()
    MODEL = args.model

    out = tempfile.mkdtemp()
    subprocess.run(["protoc", f"-I{ROOT}/src/apps/serve/proto", f"--python_out={out}", "grpc_service.proto"],
                   check=True)
    sys.path.insert(0, out)
    pb = importlib.import_module("grpc_service_pb2")

    server = subprocess.Popen([args.kiln, "serve", "--no-faces", "--models", MODEL, "--port", "0", "--grpc-port", "0",
                               "--mode", "cpu", "-q"], stdout=subprocess.PIPE, text=True)
    port = int(re.search(r":(\d+)$", server.stdout.readline().strip()).group(1))
    grpc_port = int(re.search(r":(\d+)$", server.stdout.readline().strip()).group(1))
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("GET", f"/v2/models/{MODEL}")
        meta = json.loads(connection.getresponse().read())
        (tensor,) = meta["inputs"]
        shape = [args.batch] + [d if d > 0 else 1 for d in tensor["shape"][1:]]
        x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)

        json_body = json.dumps({"inputs": [{"name": tensor["name"], "shape": shape, "datatype": "FP32",
                                            "data": x.ravel().tolist()}]}).encode()
        header = json.dumps({"inputs": [{"name": tensor["name"], "shape": shape, "datatype": "FP32",
                                         "parameters": {"binary_data_size": x.nbytes}}],
                             "parameters": {"binary_data_output": True}}).encode()
        request = pb.ModelInferRequest(model_name=MODEL)
        request.inputs.add(name=tensor["name"], datatype="FP32", shape=shape)
        request.raw_input_contents.append(x.tobytes())
        channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
        grpc.channel_ready_future(channel).result(timeout=30)

        protocols = {
            "rest_json": rest_sender(port, json_body, {"Content-Type": "application/json"}),
            "rest_binary": rest_sender(port, header + x.tobytes(), {"Inference-Header-Content-Length": str(len(header)),
                                                                    "Content-Type": "application/octet-stream"}),
            "grpc": grpc_sender(channel, request),
        }
        results = {}
        for name, make in protocols.items():
            load(make, args.clients, min(2.0, args.seconds))  # warm up
            runs = metric(port, f'kiln_serve_model_runs_total{{model="{MODEL}"}}')
            items = metric(port, f'kiln_serve_model_items_total{{model="{MODEL}"}}')
            cpu = cpu_seconds(server.pid)
            result = load(make, args.clients, args.seconds)
            result["mean_batch"] = ((metric(port, f'kiln_serve_model_items_total{{model="{MODEL}"}}') - items) /
                                    max(1.0, metric(port, f'kiln_serve_model_runs_total{{model="{MODEL}"}}') - runs))
            result["server_cpu_ms_per_request"] = (cpu_seconds(server.pid) - cpu) * 1e3 / max(1, result["ok"])
            results[name] = result
            print(f"{name:12s} {result['requests_per_s']:7.1f} req/s  p50 {result['p50_ms']:7.1f} ms  "
                  f"p99 {result['p99_ms']:7.1f} ms  mean batch {result['mean_batch']:4.1f}  "
                  f"server CPU {result['server_cpu_ms_per_request']:6.1f} ms/request  failed {result['failed']}",
                  flush=True)
        summary = {"model": MODEL, "shape": shape, "clients": args.clients, "seconds": args.seconds,
                   "protocols": results}
        print(json.dumps(summary))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(summary, f, indent=1)
    finally:
        server.terminate()
        server.wait(timeout=60)


MODEL = "fr-embed"

if __name__ == "__main__":
    main()
