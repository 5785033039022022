"""Starts the real `kiln serve` on 127.0.0.1 with a free port (read from its "listening on" line) and talks to it with
http.client."""
import http.client
import importlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

import pytest

from conftest import KILN


def kiln_module(*submodules):
    """The build's kiln Python module (beside the binary), with `submodules` imported; skips the test without it."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(KILN)), "python"))
    try:
        kiln = importlib.import_module("kiln")
        for name in submodules:
            importlib.import_module(f"kiln.{name}")
    except ImportError as e:
        pytest.skip(f"the kiln Python module is not built beside {KILN}: {e}")
    return kiln


class Server:
    def __init__(self, *args, env=None):
        merged = dict(os.environ)
        merged.update(env or {})
        self.log = tempfile.TemporaryFile(mode="w+")  # the access log (a pipe could fill and block the server)
        self.process = subprocess.Popen([KILN, "serve", "--port", "0", *map(str, args)], stdout=subprocess.PIPE,
                                        stderr=self.log, text=True, env=merged)
        line = self.process.stdout.readline()
        match = re.search(r"listening on http://([0-9.]+):(\d+)", line)
        if not match:
            self.process.kill()
            self.process.wait()
            self.log.seek(0)
            raise AssertionError(f"kiln serve did not start: {line!r}\n{self.log.read()}")
        self.port = int(match.group(2))
        self.grpc_port = None
        if "--grpc-port" in map(str, args):  # its line follows the HTTP one
            line = self.process.stdout.readline()
            match = re.search(r"grpc listening on ([0-9.]+):(\d+)", line)
            if not match:
                self.process.kill()
                self.process.wait()
                self.log.seek(0)
                raise AssertionError(f"kiln serve's gRPC did not start: {line!r}\n{self.log.read()}")
            self.grpc_port = int(match.group(2))

    def request(self, method, path, body=None, headers=None, timeout=120):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body).encode()
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            data = response.read()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        finally:
            connection.close()

    def json(self, method, path, body=None, headers=None):
        status, response_headers, data = self.request(method, path, body, headers)
        return status, response_headers, (json.loads(data) if data else None)

    def metric(self, name, headers=None):
        """The value of one sample line of /metrics, e.g. 'kiln_serve_model_runs_total{model="faces"}'; 0 if absent."""
        status, _, data = self.request("GET", "/metrics", headers=headers)
        assert status == 200, data
        for line in data.decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
        return 0.0

    def stop(self, timeout=60):
        """SIGTERM, then the exit code and the access log."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=timeout)
        self.log.seek(0)
        return code, self.log.read()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
