"""kiln.Client: a `kiln serve` worker called with the in-process APIs' names, giving their results.

    client = kiln.Client("http://127.0.0.1:8765", token=None)
    faces = client.detect_and_embed("photo.jpg")             # as kiln.faces.detect_and_embed
    many = client.detect_and_embed_batch(images)             # concurrent requests: the server batches them
    outputs = client.model("fr-embed")(batch)                # as kiln.Model(...)(batch): {output name: array}

Images are bytes (any format the server decodes), paths, or numpy RGB/gray uint8 arrays (sent as PNG). Each
thread keeps its own keep-alive connection. An https URL's certificate is checked against the system's CAs, or with
ca_file= against that PEM file instead (a self-signed server's own certificate). A 4xx answer raises KilnValueError
with the server's reason (401: PermissionError), a 5xx or a lost connection KilnIOError; timeouts raise
TimeoutError.
"""
import asyncio
import concurrent.futures
import http.client
import json
import os
import ssl
import struct
import threading
import urllib.parse
import zlib

import numpy as np

from ._kiln import KilnIOError, KilnValueError

_NUMPY_OF = {"FP32": np.float32, "FP64": np.float64, "FP16": np.float16, "INT64": np.int64, "INT32": np.int32,
             "INT16": np.int16, "INT8": np.int8, "UINT8": np.uint8, "UINT16": np.uint16, "BOOL": np.bool_}


def png_bytes(array):
    """An uint8 (H, W), (H, W, 3) or (H, W, 4) array as a PNG file (lossless; zlib level 1)."""
    array = np.ascontiguousarray(array)
    if array.dtype != np.uint8 or array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[2] not in (1, 3, 4)):
        raise KilnValueError(f"kiln.Client: an image array must be uint8 (H, W[, 1|3|4]), not {array.dtype} "
                             f"{array.shape}")
    height, width = array.shape[:2]
    channels = 1 if array.ndim == 2 else array.shape[2]
    colour_type = {1: 0, 3: 2, 4: 6}[channels]
    rows = array.reshape(height, width * channels)
    raw = np.concatenate([np.zeros((height, 1), np.uint8), rows], axis=1).tobytes()  # filter 0 on every row

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 1)) +
            chunk(b"IEND", b""))


def _image_bytes(image):
    if isinstance(image, (bytes, bytearray, memoryview)):
        return bytes(image)
    if isinstance(image, (str, os.PathLike)):
        with open(image, "rb") as f:
            return f.read()
    return png_bytes(np.asarray(image))


def _face(record):
    face = dict(record)
    face["bbox"] = tuple(float(v) for v in record["bbox"])
    face["embedding"] = np.asarray(record["embedding"], np.float32)
    face["landmarks"] = np.asarray(record["landmarks"], np.float32).reshape(-1, 2)
    face.pop("box", None)  # the same box as x, y, w, h
    return face


class Client:
    def __init__(self, url="http://127.0.0.1:8765", token=None, timeout=60.0, max_workers=16, ca_file=None):
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise KilnValueError(f"kiln.Client: {url!r} is no http(s) URL")
        self.url = url.rstrip("/")
        self._https = parsed.scheme == "https"
        self._host = parsed.hostname
        self._port = parsed.port or (443 if self._https else 80)
        self._token = token if token is not None else os.environ.get("KILN_SERVE_TOKEN")
        self._timeout = timeout
        # https: the system's CAs, or the PEM file given (a self-signed server's own certificate)
        self._tls = ssl.create_default_context(cafile=os.fspath(ca_file) if ca_file else None) if self._https else None
        self._local = threading.local()
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="kiln-client")

    def close(self):
        self._pool.shutdown(wait=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- HTTP -------------------------------------------------------------------------------------------------

    def _connection(self):
        connection = getattr(self._local, "connection", None)
        if connection is None:
            if self._https:
                connection = http.client.HTTPSConnection(self._host, self._port, timeout=self._timeout,
                                                         context=self._tls)
            else:
                connection = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
            self._local.connection = connection
        return connection

    def request(self, method, path, body=None, headers=None):
        """One request on this thread's connection: (status, headers with lower-case names, body bytes)."""
        headers = dict(headers or {})
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        for attempt in (0, 1):  # a keep-alive connection the server closed is opened again once
            connection = self._connection()
            try:
                connection.request(method, path, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read()
                answer = (response.status, {k.lower(): v for k, v in response.getheaders()}, data)
                if answer[1].get("connection", "").lower() == "close":
                    self._drop()
                return answer
            except TimeoutError:
                self._drop()
                raise
            except (http.client.HTTPException, ConnectionError) as error:
                self._drop()
                if attempt == 1:
                    raise KilnIOError(f"kiln.Client: {method} {self.url}{path}: {error}") from error
        raise AssertionError("unreachable")

    def _drop(self):
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    def _checked(self, method, path, body=None, headers=None):
        status, response_headers, data = self.request(method, path, body, headers)
        if status < 400:
            return response_headers, data
        try:
            reason = json.loads(data).get("error", "")
        except (ValueError, AttributeError):
            reason = data[:200].decode("utf-8", "replace")
        message = f"kiln serve: {method} {path}: {status} {reason}".rstrip()
        if status == 401:
            raise PermissionError(message)
        raise (KilnValueError if status < 500 else KilnIOError)(message)

    def _json(self, method, path, body=None, headers=None):
        return json.loads(self._checked(method, path, body, headers)[1])

    # ---- the server -------------------------------------------------------------------------------------------

    def health(self):
        """The crawler API's GET /health."""
        return self._json("GET", "/health")

    def ready(self):
        """Whether every model loaded (GET /v2/health/ready)."""
        return self.request("GET", "/v2/health/ready")[0] == 200

    def metrics(self):
        """GET /metrics, Prometheus text."""
        return self._checked("GET", "/metrics")[1].decode()

    # ---- faces, as kiln.faces ---------------------------------------------------------------------------------

    def detect_and_embed(self, image):
        """The faces of one image (POST /v1/faces), each a dict as kiln.faces.detect_and_embed gives."""
        answer = self._json("POST", "/v1/faces", _image_bytes(image), {"Content-Type": "application/octet-stream"})
        return [_face(record) for record in answer["faces"]]

    def detect_and_embed_batch(self, images, return_exceptions=False):
        """The faces of each image, sent as concurrent requests (the server batches them). An image the server
        refuses raises, or with return_exceptions=True its entry is the exception."""
        futures = [self._pool.submit(self.detect_and_embed, image) for image in images]
        results = []
        for future in futures:
            try:
                results.append(future.result())
            except Exception as error:  # noqa: BLE001 (returned to the caller as asked)
                if not return_exceptions:
                    raise
                results.append(error)
        return results

    async def detect_and_embed_async(self, image):
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.detect_and_embed, image)

    async def detect_and_embed_batch_async(self, images, return_exceptions=False):
        return await asyncio.gather(*(self.detect_and_embed_async(image) for image in images),
                                    return_exceptions=return_exceptions)

    # ---- models, as kiln.Model ---------------------------------------------------------------------------------

    def model(self, name):
        """A served model (Open Inference Protocol), called like kiln.Model."""
        return RemoteModel(self, name)

    def models(self):
        """The names of the models the server serves over /v2 (from its /metrics ready gauges)."""
        names = []
        for line in self.metrics().splitlines():
            if line.startswith("kiln_serve_model_ready{"):
                name = line.split('model="', 1)[1].split('"', 1)[0]
                if name not in ("faces", "segment"):
                    names.append(name)
        return names


class RemoteModel:
    def __init__(self, client, name):
        self._client = client
        self.name = name
        self._metadata = client._json("GET", f"/v2/models/{urllib.parse.quote(name)}")
        self._binary = "binary_tensor_data" in client._json("GET", "/v2").get("extensions", [])

    @property
    def inputs(self):
        return [{"name": t["name"], "shape": t["shape"], "datatype": t["datatype"]} for t in self._metadata["inputs"]]

    @property
    def outputs(self):
        return [{"name": t["name"], "shape": t["shape"], "datatype": t["datatype"]} for t in self._metadata["outputs"]]

    def __call__(self, batch):
        """{output name: numpy array} for a float32 batch (N, ...), as kiln.Model gives."""
        batch = np.ascontiguousarray(batch, dtype=np.float32)
        tensor = {"name": self._metadata["inputs"][0]["name"], "shape": list(batch.shape), "datatype": "FP32"}
        path = f"/v2/models/{urllib.parse.quote(self.name)}/infer"
        if not self._binary:
            tensor["data"] = batch.ravel().tolist()
            answer = self._client._json("POST", path, json.dumps({"inputs": [tensor]}).encode(),
                                        {"Content-Type": "application/json"})
            return {o["name"]: np.asarray(o["data"], _NUMPY_OF[o["datatype"]]).reshape(o["shape"])
                    for o in answer["outputs"]}
        tensor["parameters"] = {"binary_data_size": batch.nbytes}
        header = json.dumps({"inputs": [tensor], "parameters": {"binary_data_output": True}}).encode()
        headers, data = self._client._checked("POST", path, header + batch.tobytes(), {
            "Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(len(header))})
        header_length = int(headers.get("inference-header-content-length", len(data)))
        answer = json.loads(data[:header_length])
        outputs, at = {}, header_length
        for o in answer["outputs"]:
            dtype = np.dtype(_NUMPY_OF[o["datatype"]])
            if "data" in o:
                outputs[o["name"]] = np.asarray(o["data"], dtype).reshape(o["shape"])
                continue
            size = o["parameters"]["binary_data_size"]
            outputs[o["name"]] = np.frombuffer(data, dtype, size // dtype.itemsize, at).reshape(o["shape"]).copy()
            at += size
        return outputs
